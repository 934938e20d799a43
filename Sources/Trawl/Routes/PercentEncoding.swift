/// Percent-encoding for the parts of a URL and for form bodies (UTF-8, uppercase hex).
package enum PercentEncoding {
    /// RFC 3986 unreserved characters: never encoded anywhere.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Characters a path segment may hold literally besides unreserved ones (RFC 3986 `pchar`).
    private static let segmentExtras = Set("!$&'()*+,;=:@".utf8)

    /// Encodes one path segment: `/`, `?`, `#`, `%` and spaces are encoded.
    static func segment(_ text: String) -> String {
        encode(text) { isUnreserved($0) || segmentExtras.contains($0) }
    }

    /// Encodes literal path text: like `segment`, but `/` separates segments and `%` is kept as written.
    static func pathLiteral(_ text: String) -> String {
        encode(text) {
            isUnreserved($0) || segmentExtras.contains($0) || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%")
        }
    }

    /// Encodes a query name or value: everything but unreserved characters.
    package static func queryComponent(_ text: String) -> String {
        encode(text, allowed: isUnreserved)
    }

    /// Encodes for `application/x-www-form-urlencoded`: a space becomes `+`.
    package static func formComponent(_ text: String) -> String {
        var out = ""
        for part in text.split(separator: " ", omittingEmptySubsequences: false).enumerated() {
            if part.offset > 0 { out += "+" }
            out += encode(String(part.element), allowed: isUnreserved)
        }
        return out
    }

    private static func encode(_ text: String, allowed: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if allowed(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
