/// What is wrong with a URL before anything is sent: the checks the client makes on every request, exposed so a
/// command line can refuse a bad argument as a usage error, before any request, with the same words.
///
/// ```swift
/// URLCheck.problem(in: "ftp://host/x")?.message            // "scheme 'ftp' is not allowed"
/// URLCheck.problem(in: "http://host:99999/")?.message      // "the port 99999 is out of range (1-65535)"
/// URLCheck.problem(in: "http://host/a b")?.message          // "the URL contains a space at byte 13"
/// URLCheck.problem(in: "https://api.example.com/items")     // nil
/// ```
public enum URLCheck {
    public struct Problem: Sendable, Hashable {
        public var code: TrawlError.Code
        public var message: String
        public var hint: String
    }

    /// The longest URL sent (64 KiB): servers refuse far shorter ones, and a longer one is a mistake (a file
    /// pasted into the query), never worth megabytes of error text.
    public static let maxLength = 64 << 10

    /// The first problem found, or `nil` for an absolute http or https URL with a host, a port in range and no
    /// whitespace or control characters.
    public static func problem(in url: String) -> Problem? {
        if url.utf8.count > maxLength {
            return Problem(
                code: .invalidURL,
                message: "the URL is \(url.utf8.count) bytes long, over the limit of \(maxLength) bytes",
                hint: "send long parameters in a request body (-d, --json) instead of the query")
        }
        if let bad = HeaderValidation.firstInvalidCharacter(in: url) {
            return Problem(
                code: .invalidURL, message: "the URL contains control character \(bad)", hint: "percent-encode it")
        }
        if let offset = url.utf8.firstIndex(where: { $0 == 0x20 || $0 == 0x09 }) {
            let index = url.utf8.distance(from: url.utf8.startIndex, to: offset)
            let what = url.utf8[offset] == 0x20 ? "a space" : "a tab"
            return Problem(
                code: .invalidURL, message: "the URL contains \(what) at byte \(index)",
                hint: "percent-encode it (a space is %20)")
        }
        guard let origin = Origin(url: url) else {
            return Problem(
                code: .invalidURL, message: "the URL has no scheme or host",
                hint: "use an absolute URL such as http://host/path")
        }
        guard origin.scheme == "http" || origin.scheme == "https" else {
            return Problem(
                code: .unsupportedScheme, message: "scheme '\(origin.scheme)' is not allowed",
                hint: "Trawl speaks only http and https")
        }
        guard !origin.host.isEmpty else {
            return Problem(
                code: .invalidURL, message: "the URL has no host", hint: "use an absolute URL such as http://host/path")
        }
        if let port = portText(url) {
            guard port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return Problem(
                    code: .invalidURL, message: "the port '\(port)' is not a number",
                    hint: "give a port from 1 to 65535 after the host, or none for the scheme's default")
            }
            guard let number = Int(port), (1...65535).contains(number) else {
                return Problem(
                    code: .invalidURL, message: "the port \(port) is out of range (1-65535)",
                    hint: "give a port from 1 to 65535, or none for the scheme's default")
            }
        }
        return nil
    }

    /// The first control character in `text` other than a tab, described for a message (`U+000D (CR) at byte 5`),
    /// or `nil`: what makes a header value or a URL unsafe to send.
    public static func controlCharacter(in text: String) -> String? {
        HeaderValidation.firstInvalidCharacter(in: text)
    }

    /// The text after the host's `:` in the authority, when there is one (`nil` for no port or an empty one).
    /// Reads UTF-8 bytes: this runs for every request, and walking Characters would cost more than the check.
    static func portText(_ url: String) -> Substring? {
        let utf8 = url.utf8
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        var cursor = utf8.startIndex
        var authorityStart: String.Index?
        while cursor != utf8.endIndex {
            let next = utf8.index(after: cursor)
            if utf8[cursor] == colon, utf8[next...].starts(with: [slash, slash]) {
                authorityStart = utf8.index(next, offsetBy: 2)
                break
            }
            cursor = next
        }
        guard let authorityStart else { return nil }
        var end = authorityStart
        var hostStart = authorityStart
        while end != utf8.endIndex {
            let byte = utf8[end]
            if byte == slash || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            utf8.formIndex(after: &end)
            if byte == UInt8(ascii: "@") { hostStart = end }  // the last one ends the userinfo
        }
        let hostAndPort = utf8[hostStart..<end]
        let afterHost: String.Index
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            afterHost = utf8.index(after: close)
        } else {
            guard let found = hostAndPort.firstIndex(of: colon) else { return nil }
            afterHost = found
        }
        guard afterHost != end, utf8[afterHost] == colon else { return nil }
        let port = utf8.index(after: afterHost)
        return port == end ? nil : url[port..<end]
    }
}
