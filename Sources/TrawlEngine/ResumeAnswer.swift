import Foundation

/// What a resuming download does with the server's answer to `Range: bytes=N-` + `If-Range: V`.
///
/// Only a `206` that starts at N and carries the same validator as the partial file is appended: a server
/// that ignored `If-Range` answers a changed resource with a `206` of the new bytes, which must not be
/// glued onto the old ones.
enum ResumeAnswer: Equatable {
    /// Append the body after the N bytes already on disk; the file will hold `total` bytes when known.
    case append(total: Int64?)
    /// The partial file already holds the whole resource (`416` with `Content-Range: bytes */N`).
    case complete
    /// A `416` that says the file has N bytes but carries no validator: the resource may have changed to another
    /// of the same length, so ask (`HEAD`) before calling the partial file complete.
    case confirm
    /// The answer cannot be appended (another range, another validator): ask again without a range.
    case restart
    /// A full answer (`200`) or an error status: take it as a fresh download or a failure.
    case fresh

    /// Decides from the response head alone, so every server behaviour is testable without a socket.
    ///
    /// ```swift
    /// ResumeAnswer(status: 206, headers: ["Content-Range": "bytes 100-999/1000", "ETag": "\"v1\""],
    ///              resumeFrom: 100, validator: "\"v1\"")   // .append(total: 1000)
    /// ```
    init(status: Int, headers: HTTPHeaders, resumeFrom: Int64, validator: String) {
        let range = ContentRange(headers["Content-Range"])
        let stored = Self.isETag(validator) ? headers["ETag"] : headers["Last-Modified"]
        switch status {
        case 206:
            // RFC 9110 §15.3.7: a 206 carries the validators a 200 would; one that does not match is not ours.
            guard let range, range.first == resumeFrom, stored == validator else {
                self = .restart
                return
            }
            self = .append(total: range.total)
        case 416:
            // A 416 need not carry validators; when it does, they must match too.
            guard let range, range.total == resumeFrom, stored == nil || stored == validator else {
                self = .restart
                return
            }
            self = stored == nil ? .confirm : .complete
        default:
            self = .fresh
        }
    }

    /// Whether a stored validator is an entity tag (`"…"`) rather than a `Last-Modified` date.
    static func isETag(_ validator: String) -> Bool { validator.hasPrefix("\"") }

    /// What `If-Range` will send on resume: a strong ETag, else the Last-Modified date, else nothing. Weak
    /// tags (`W/"…"`) are never used: RFC 9110 §13.1.5 requires a strong comparison for `If-Range`.
    static func validator(of headers: HTTPHeaders) -> String {
        if let etag = headers["ETag"], isETag(etag) { return etag }
        return headers["Last-Modified"] ?? ""
    }
}

/// `Content-Range: bytes FIRST-LAST/TOTAL` (or `bytes */TOTAL`).
struct ContentRange {
    var first: Int64
    var last: Int64?
    var total: Int64?

    init?(_ header: String?) {
        guard var text = header?.trimmingCharacters(in: .whitespaces), text.hasPrefix("bytes ") else { return nil }
        text.removeFirst(6)
        let parts = text.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        total = Int64(parts[1])
        if parts[0] == "*" {
            first = -1
            last = nil
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]) else { return nil }
        self.first = first
        self.last = last
    }
}
