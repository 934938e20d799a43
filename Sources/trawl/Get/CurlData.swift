import ArgumentParser
import Foundation

/// curl's request-data options for `get`: `-d`, `--data-binary`, `--data-urlencode` and `--json`, read as curl
/// reads them, and the body (or, with `-G`, the query) they make.
struct CurlData {
    var data: [String] = []
    var binary: [String] = []
    var urlencode: [String] = []
    var json: [String] = []

    var isEmpty: Bool { data.isEmpty && binary.isEmpty && urlencode.isEmpty && json.isEmpty }

    /// The pieces joined as curl joins them: `-d`, `--data-binary` and `--data-urlencode` with `&` (in that
    /// order of the options), `--json` pieces end to end. `nil` when none was given.
    func bytes(readFile: (String) throws -> [UInt8] = CurlData.read) throws -> [UInt8]? {
        if !json.isEmpty {
            return try json.flatMap { try Self.contents($0, strip: false, readFile: readFile) }
        }
        var pieces: [[UInt8]] = []
        for piece in data { pieces.append(try Self.contents(piece, strip: true, readFile: readFile)) }
        for piece in binary { pieces.append(try Self.contents(piece, strip: false, readFile: readFile)) }
        for piece in urlencode { pieces.append(try Self.urlencoded(piece, readFile: readFile)) }
        guard !pieces.isEmpty else { return nil }
        return Array(pieces.joined(separator: [UInt8(ascii: "&")]))
    }

    /// `@FILE` or `@-` read (with CR and LF removed for `-d`, as curl does), anything else as given.
    static func contents(
        _ piece: String, strip: Bool, readFile: (String) throws -> [UInt8]
    ) throws -> [UInt8] {
        guard piece.hasPrefix("@") else { return Array(piece.utf8) }
        let bytes = try readFile(String(piece.dropFirst()))
        return strip ? bytes.filter { $0 != 0x0D && $0 != 0x0A } : bytes
    }

    /// `--data-urlencode`: `content`, `=content`, `name=content`, `@file`, `name@file`; the first `=` decides,
    /// else the first `@`, and only the content is encoded.
    static func urlencoded(_ piece: String, readFile: (String) throws -> [UInt8]) throws -> [UInt8] {
        let separator = piece.firstIndex(of: "=") ?? piece.firstIndex(of: "@")
        guard let separator else { return Array(escape(Array(piece.utf8)).utf8) }
        let name = String(piece[..<separator])
        let rest = String(piece[piece.index(after: separator)...])
        let content = piece[separator] == "@" ? try readFile(rest) : Array(rest.utf8)
        let encoded = escape(content)
        return Array((name.isEmpty ? encoded : "\(name)=\(encoded)").utf8)
    }

    /// Percent-encoding as curl 7.88's `--data-urlencode` does it: everything but letters, digits and `-._~`, and a
    /// space as `+` (measured: `curl --data-urlencode 'q=x y'` sends `q=x+y`).
    static func escape(_ bytes: [UInt8]) -> String {
        var result = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: " "):
                result += "+"
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result
    }

    /// A file's bytes, `-` for standard input; a usage error naming the file when it cannot be read.
    static func read(_ path: String) throws -> [UInt8] {
        if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ValidationError("cannot read '\(path)' for the request data: no such file")
        }
        guard !isDirectory.boolValue else {
            throw ValidationError("'\(path)' is a directory: the request data needs a file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read '\(path)' for the request data: permission denied")
        }
        return Array(data)
    }
}
