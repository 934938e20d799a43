/// A request target (`/path?query`) split into its parts.
///
/// Parsing is deliberately simple: the target is split on the first `?`, the query on `&`, each
/// pair on its first `=`, and names and values are percent-decoded. `+` is kept literally.
struct RequestTarget: Sendable {
    /// The path, as sent (not decoded), without the query.
    let path: String
    /// The raw query string without the leading `?` (empty when there is none).
    let rawQuery: String
    /// The query pairs, in order, repeats kept.
    let query: [(name: String, value: String)]

    init(_ target: String) {
        if let mark = target.firstIndex(of: "?") {
            self.path = String(target[..<mark])
            self.rawQuery = String(target[target.index(after: mark)...])
        } else {
            self.path = target
            self.rawQuery = ""
        }
        self.query = Self.parseQuery(self.rawQuery)
    }

    /// The path split on `/`, without the empty leading segment: `/bytes/10` -> `["bytes", "10"]`.
    var segments: [Substring] {
        self.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
    }

    /// The first value of the query parameter `name`, if present.
    func value(_ name: String) -> String? {
        self.query.first { $0.name == name }?.value
    }

    /// The first value of `name` parsed as an integer; `nil` when absent or not a number.
    func int(_ name: String) -> Int? {
        self.value(name).flatMap { Int($0) }
    }

    /// Whether `name` is present with a truthy value (`1`, `true`, `yes`, or empty).
    func flag(_ name: String) -> Bool {
        guard let value = self.value(name) else { return false }
        return ["", "1", "true", "yes"].contains(value.lowercased())
    }

    static func parseQuery(_ query: String) -> [(name: String, value: String)] {
        guard !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                let name = percentDecode(pair[..<equals])
                let value = percentDecode(pair[pair.index(after: equals)...])
                return (name, value)
            }
            return (percentDecode(pair), "")
        }
    }

    /// Decodes `%XX` escapes; malformed escapes are kept as they are. Invalid UTF-8 is repaired.
    static func percentDecode(_ text: Substring) -> String {
        guard text.contains("%") else { return String(text) }
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
