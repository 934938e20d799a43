@testable import TrawlEngine

/// The file name a download takes from `Content-Disposition` (or the URL): always a plain, non-empty name
/// without a path separator or a control character (C0, DEL or C1: a name reaches the terminal and the file
/// system), not `.` or `..`, at most 255 bytes, and one that `DownloadName.path(for:in:)` keeps inside the
/// directory.
///
/// Input: the header value, then after the first line feed the URL (a fixed one when there is none).
enum ContentDispositionTarget {
    static func run(_ input: [UInt8]) {
        let parts = input.split(separator: 10, maxSplits: 1, omittingEmptySubsequences: false)
        let header = String(decoding: parts.first ?? [], as: UTF8.self)
        let url = parts.count > 1 ? String(decoding: parts[1], as: UTF8.self) : "http://127.0.0.1:8080/files/x.bin"
        let name = DownloadName.fileName(contentDisposition: header, url: url)
        require(!name.isEmpty && name != "." && name != "..", "name \(name.debugDescription)")
        let separators = name.unicodeScalars.filter { $0 == "/" || $0 == "\\" }
        require(separators.isEmpty, "name \(name.debugDescription) has a separator")
        require(name.utf8.count <= 255, "name of \(name.utf8.count) bytes")
        let controls = name.unicodeScalars.filter { $0.properties.generalCategory == .control }
        require(controls.isEmpty, "name \(name.debugDescription) has control characters")
        do {
            let path = try DownloadName.path(for: name, in: "/tmp/trawl-fuzz")
            require(path.utf8.starts(with: "/tmp/trawl-fuzz/".utf8), "path \(path.debugDescription) leaves the directory")
        } catch {
            require(false, "path(for: \(name.debugDescription)) threw \(error)")
        }
    }
}
