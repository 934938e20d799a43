#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The items of the `/paged/STYLE` API, computed without a server (ground truth for tests).
///
/// Without a tag an item is `{"id":I,"name":"item-I"}`. With a tag (`/paged/STYLE?tag=X`) it is
/// `{"id":I,"name":"item-I","tag":"X","score":S,"created_at":"2024-MM-DDTHH:MM:SSZ","active":B}`, where the
/// score `S` (a decimal in `0...99.99` with two fraction digits, e.g. `73.05`), the timestamp (a second
/// of the year 2024, UTC) and `B` (`true` or `false`) are derived from an FNV-1a hash of the tag and the
/// id: the same `(tag, id)` always gives the same item, and nothing is random.
///
/// ```swift
/// SyntheticItems.json(id: 3, tag: nil)
/// // {"id":3,"name":"item-3"}
/// SyntheticItems.json(id: 3, tag: "books")
/// // {"id":3,"name":"item-3","tag":"books","score":...,"created_at":"2024-...Z","active":...}
/// let page = "[" + (0..<10).map { SyntheticItems.json(id: $0, tag: "books") }.joined(separator: ",") + "]"
/// ```
public enum SyntheticItems {
    /// The compact JSON text of item `id`, byte for byte as the server writes it into a page.
    ///
    /// ```swift
    /// let expected = (20..<30).map { SyntheticItems.json(id: $0, tag: "t") }.joined(separator: ",")
    /// #expect(pageText == "[" + expected + "]")   // a bare-array page (`/paged/link?page=3&tag=t`)
    /// ```
    ///
    /// - Parameters:
    ///   - id: the item's id (its index in the list, from `0`).
    ///   - tag: the `tag` query parameter (percent-decoded), or `nil` for the plain two-member item.
    public static func json(id: Int, tag: String?) -> String {
        var out = ""
        append(id: id, tag: tag.map(Tag.init), to: &out)
        return out
    }

    /// A tag prepared once per page: its JSON text and the FNV-1a state after its bytes and the separator.
    struct Tag {
        let escaped: String
        let hashPrefix: UInt64

        init(_ tag: String) {
            escaped = JSONText.string(tag)
            hashPrefix = StableHash.fnv1a(tag + "\u{0}")
        }
    }

    /// The page `[item,item,…]` for `ids`, built in one string.
    static func page(_ ids: [Int], tag: String?) -> String {
        let prepared = tag.map(Tag.init)
        var out = "["
        out.reserveCapacity(ids.count * (prepared == nil ? 32 : 140) + 2)
        for (index, id) in ids.enumerated() {
            if index > 0 { out += "," }
            append(id: id, tag: prepared, to: &out)
        }
        out += "]"
        return out
    }

    /// Appends item `id` (the same bytes as `JSONText.object` of its members would give).
    static func append(id: Int, tag: Tag?, to out: inout String) {
        let number = String(id)
        out += "{\"id\":"
        out += number
        out += ",\"name\":\"item-"
        out += number
        out += "\""
        if let tag {
            var fnv = tag.hashPrefix
            for byte in number.utf8 {
                fnv ^= UInt64(byte)
                fnv = fnv &* 0x0000_0100_0000_01b3
            }
            let hash = StableHash.mix(fnv)
            let cents = Int(hash % 10_000)
            let fraction = cents % 100
            let secondOfYear = Int((hash >> 16) % UInt64(366 * 86_400))
            out += ",\"tag\":"
            out += tag.escaped
            out += ",\"score\":"
            out += String(cents / 100)
            out += fraction < 10 ? ".0" : "."
            out += String(fraction)
            out += ",\"created_at\":\""
            out += CivilTime.iso8601(epochSeconds: CivilTime.epoch2024 + secondOfYear)
            out += (hash >> 63) == 1 ? "\",\"active\":true" : "\",\"active\":false"
        }
        out += "}"
    }
}

/// Deterministic hashing for the synthetic data and fault selection (never seeded, never random).
enum StableHash {
    /// 64-bit FNV-1a of the UTF-8 bytes of `text`.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// A bit mixer (the SplitMix64 finalizer) so every bit of the result depends on every input bit.
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// `text` mapped uniformly to `0 ..< 1`.
    static func unitInterval(_ text: String) -> Double {
        Double(mix(fnv1a(text)) >> 11) / Double(UInt64(1) << 53)
    }
}

/// UTC calendar arithmetic (proleptic Gregorian), without Foundation.
enum CivilTime {
    /// 2024-01-01T00:00:00Z as Unix epoch seconds.
    static let epoch2024 = 1_704_067_200

    /// The wall-clock time as Unix epoch seconds.
    static var now: Int {
        Int(time(nil))
    }

    /// The civil date of `days` since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    static func iso8601(epochSeconds: Int) -> String {
        let (days, seconds) = split(epochSeconds)
        let (year, month, day) = date(days: days)
        return String(year) + "-" + pad(month) + "-" + pad(day) + "T" + clock(seconds) + "Z"
    }

    /// The IMF-fixdate of RFC 7231 (section 7.1.1.1), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(epochSeconds: Int) -> String {
        let (days, seconds) = split(epochSeconds)
        let (year, month, day) = date(days: days)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((days % 7) + 7) % 7]
        return weekday + ", " + pad(day) + " " + months[month - 1] + " " + String(year) + " " + clock(seconds) + " GMT"
    }

    private static func split(_ epochSeconds: Int) -> (days: Int, seconds: Int) {
        let days = epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400
        return (days, epochSeconds - days * 86_400)
    }

    private static func clock(_ seconds: Int) -> String {
        pad(seconds / 3600) + ":" + pad(seconds / 60 % 60) + ":" + pad(seconds % 60)
    }

    private static func pad(_ value: Int) -> String {
        value < 10 ? "0" + String(value) : String(value)
    }
}
