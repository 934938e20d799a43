import Foundation

/// Turning a server-given file name into a safe path.
enum DownloadName {
    /// The name from `filename*=UTF-8''…` (RFC 6266/5987), else `filename="…"`, else the URL's last path
    /// component, reduced to a plain file name.
    static func fileName(contentDisposition: String?, url: String) -> String {
        var candidates: [String] = []
        if let header = contentDisposition {
            var plain: String?
            var extended: String?
            for parameter in parameters(header) {
                if parameter.name == "filename*" {
                    let value = parameter.value
                    if let quote = value.range(of: "''") {
                        extended = String(value[quote.upperBound...]).removingPercentEncoding
                    }
                } else if parameter.name == "filename" {
                    plain = parameter.value
                }
            }
            candidates += [extended, plain].compactMap { $0 }
        }
        if let path = URL(string: url)?.path, !path.isEmpty { candidates.append(path) }
        for candidate in candidates {
            if let name = sanitized(candidate) { return name }
        }
        return "download"
    }

    /// The last component after `/` or `\`, without control characters; `nil` when nothing usable is left.
    static func sanitized(_ raw: String) -> String? {
        // By scalar: a separator followed by a combining mark is one Character that is not "/".
        let last = raw.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last
            .map { String(String.UnicodeScalarView($0)) } ?? ""
        // C0, DEL and C1 (U+0080-U+009F: U+009B is a terminal's CSI) controls go.
        let cleaned = String(last.unicodeScalars.filter { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }
            .map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        guard !cleaned.isEmpty, cleaned != ".", cleaned != "..", cleaned.utf8.count <= 255 else { return nil }
        return cleaned
    }

    /// Refuses, before anything is sent, a destination that cannot become a file: a directory (or a name
    /// ending in `/`), or one whose directory does not exist.
    static func checkDestination(_ destination: String) throws {
        guard !destination.isEmpty, !destination.hasSuffix("/"), !isDirectory(destination) else {
            let inside = destination.hasSuffix("/") ? destination : destination + "/"
            throw FileError("write", destination, reason: "it is a directory; name a file (for example \(inside)NAME)")
        }
        try checkDirectory(PathName.directory(containing: destination), for: destination)
    }

    /// Refuses a directory to download into that does not exist or is not a directory.
    static func checkDirectory(_ directory: String, for target: String? = nil) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw FileError("write", target ?? directory, reason: "the directory \(directory) does not exist")
        }
        guard isDirectory.boolValue else {
            throw FileError("write", target ?? directory, reason: "\(directory) is not a directory")
        }
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// `directory/name`, refusing anything that would resolve outside `directory`.
    static func path(for name: String, in directory: String) throws -> String {
        let base = URL(fileURLWithPath: directory).standardizedFileURL.path
        let candidate = URL(fileURLWithPath: base).appendingPathComponent(name).standardizedFileURL.path
        // Bytes, not Characters: a name starting with a combining mark joins the "/" before it.
        let prefix = base.hasSuffix("/") ? base : base + "/"
        guard candidate.utf8.starts(with: prefix.utf8), !name.utf8.contains(UInt8(ascii: "/")) else {
            throw FileError("write", candidate, reason: "the server's file name would leave \(base)")
        }
        return candidate
    }

    /// `name=value` parameters of a header like `attachment; filename="a b.txt"; filename*=UTF-8''a%20b.txt`.
    static func parameters(_ header: String) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        var index = header.startIndex
        func skipSpaces() {
            while index < header.endIndex, header[index] == " " || header[index] == "\t" {
                index = header.index(after: index)
            }
        }
        // Skip the disposition type.
        while index < header.endIndex, header[index] != ";" { index = header.index(after: index) }
        while index < header.endIndex {
            index = header.index(after: index)  // past ';'
            skipSpaces()
            var name = ""
            while index < header.endIndex, header[index] != "=", header[index] != ";" {
                name.append(header[index])
                index = header.index(after: index)
            }
            guard index < header.endIndex, header[index] == "=" else { continue }
            index = header.index(after: index)
            skipSpaces()
            var value = ""
            if index < header.endIndex, header[index] == "\"" {
                index = header.index(after: index)
                while index < header.endIndex, header[index] != "\"" {
                    if header[index] == "\\", header.index(after: index) < header.endIndex {
                        index = header.index(after: index)
                    }
                    value.append(header[index])
                    index = header.index(after: index)
                }
                if index < header.endIndex { index = header.index(after: index) }
                while index < header.endIndex, header[index] != ";" { index = header.index(after: index) }
            } else {
                while index < header.endIndex, header[index] != ";" {
                    value.append(header[index])
                    index = header.index(after: index)
                }
            }
            result.append(
                (name.trimmingCharacters(in: .whitespaces).lowercased(), value.trimmingCharacters(in: .whitespaces)))
        }
        return result
    }
}
