/// The fast lane for the elements of the items array when they are written out as compact JSON, recorded as
/// events for decoding, or only counted (`trawl extract`, `trawl fetch`, typed items): whole elements are
/// validated and copied straight from the input, without a parser callback per token.
///
/// It accepts only what the slow path (yajl behind `InputScanner`) accepts, and writes exactly the bytes the
/// slow path writes: the element without its insignificant whitespace, strings with escapes decoded and
/// escaped again the way `JSONEscaping` does; or, as events, the encoding `ParseState` records (see
/// `EventTag`), byte for byte, the repeated-keys flag of each object included. Anything else stops it at the
/// last element boundary (an invalid or unusual element, a limit, an element nested too deep, the `]` that ends
/// the array): the slow path then takes over from that byte and reports or handles what follows exactly as it
/// would have. So errors, their offsets and the elements handed out before them do not depend on which path
/// read the bytes.
struct ItemScanner {
    /// How many levels an element may open (the depth limit less the items array's own depth).
    let maxLevels: Int
    let maxTokenBytes: Int
    let maxElementBytes: Int
    /// What is made of an element: compact JSON, events (`.values`) or nothing (`.countOnly`).
    let form: JSONExtractor.Form
    /// An element was taken since the array opened: the next byte (after whitespace) must be a comma or `]`.
    var afterValue: Bool
    /// Strings with escapes are decoded here before they are escaped again (or recorded).
    private var scratch = ByteBuffer()
    /// The open containers of an element recorded as events, by level (1...63); allocated for `.events` only.
    private var levels: UnsafeMutablePointer<EventLevel>?

    init(maxLevels: Int, maxTokenBytes: Int, maxElementBytes: Int, form: JSONExtractor.Form, afterValue: Bool) {
        self.maxLevels = Swift.min(maxLevels, 63)
        self.maxTokenBytes = maxTokenBytes
        self.maxElementBytes = maxElementBytes
        self.form = form
        self.afterValue = afterValue
        if form == .values {
            levels = UnsafeMutablePointer<EventLevel>.allocate(capacity: 64)
        }
    }

    mutating func release() {
        scratch.release()
        levels?.deallocate()
        levels = nil
    }

    struct Result {
        /// The bytes up to the end of the last element taken: the slow path or the next call starts there.
        var committed = 0
        var elements = 0
        /// Line feeds before `committed`, and the offset of the last one (-1 when none).
        var newlines = 0
        var lastNewline = -1
        /// The lane ends: the slow path takes the bytes from `committed` on. Otherwise it needs more bytes.
        var exit = false
    }

    /// Takes the complete elements at the start of `input` (which begins at an element boundary), writing each
    /// to `out` and its end to `ends` (as compact JSON followed by a line feed, or as events); counted only, nothing
    /// is written.
    mutating func scan(_ input: UnsafeRawBufferPointer, into out: inout ByteBuffer, ends: inout [Int]) -> Result {
        var result = Result()
        guard let base = input.baseAddress else { return result }
        let end = input.count
        var p = 0
        var newlines = 0
        var lastNewline = -1
        while true {
            p = skipWhitespace(base, p, end, &newlines, &lastNewline)
            // Whitespace between elements is taken too, so that a long run of it is never held.
            result.committed = p
            result.newlines = newlines
            result.lastNewline = lastNewline
            if p >= end { return result }
            var byte = base.load(fromByteOffset: p, as: UInt8.self)
            if afterValue {
                guard byte == UInt8(ascii: ",") else {
                    result.exit = true
                    return result
                }
                p = skipWhitespace(base, p + 1, end, &newlines, &lastNewline)
                if p >= end { return result }
                byte = base.load(fromByteOffset: p, as: UInt8.self)
            } else if byte == UInt8(ascii: "]") {
                result.exit = true
                return result
            }
            let outStart = out.count
            let elementEnd: Int
            switch form {
            case .values:
                var writer = EventWriter(levels: levels.unsafelyUnwrapped, maxElementBytes: maxElementBytes)
                elementEnd = element(&writer, base, p, end, &out, &newlines, &lastNewline)
            case .json:
                var writer = JSONRunWriter(run: p, maxElementBytes: maxElementBytes)
                elementEnd = element(&writer, base, p, end, &out, &newlines, &lastNewline)
            case .countOnly:
                var writer = CountWriter()
                elementEnd = element(&writer, base, p, end, &out, &newlines, &lastNewline)
            }
            guard elementEnd >= 0 else {
                out.truncate(to: outStart)
                result.exit = elementEnd == Self.reject
                return result
            }
            if form != .countOnly { ends.append(out.count) }
            if form == .json { out.append(UInt8(ascii: "\n")) }
            afterValue = true
            p = elementEnd
            result.committed = p
            result.elements += 1
            result.newlines = newlines
            result.lastNewline = lastNewline
        }
    }

    static let incomplete = -1
    static let reject = -2

    @inline(__always)
    private func skipWhitespace(
        _ base: UnsafeRawPointer, _ start: Int, _ end: Int, _ newlines: inout Int, _ lastNewline: inout Int
    ) -> Int {
        var p = start
        while p < end {
            let byte = base.load(fromByteOffset: p, as: UInt8.self)
            if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                p += 1
            } else if byte == 0x0A {
                newlines += 1
                lastNewline = p
                p += 1
            } else {
                break
            }
        }
        return p
    }

    /// Where an element's scan is in JSON's grammar: its nesting (which levels are objects) and what the next
    /// token may be.
    struct Grammar {
        // What the next token may be.
        private static let expectValue: UInt8 = 0
        private static let expectValueOrClose: UInt8 = 1
        private static let expectKey: UInt8 = 2
        private static let expectKeyOrClose: UInt8 = 3
        private static let expectColon: UInt8 = 4
        private static let expectCommaOrClose: UInt8 = 5

        private(set) var level = 0
        private var objects: UInt64 = 0
        private var expect = Self.expectValue

        var expectsKey: Bool { expect == Self.expectKey || expect == Self.expectKeyOrClose }
        var expectsValue: Bool { expect <= Self.expectValueOrClose }
        /// The innermost open container is an object.
        var inObject: Bool { objects & (1 << UInt64(level)) != 0 }

        /// A `{` or `[`; false when no value may start here or it would open more than `maxLevels` levels.
        @inline(__always)
        mutating func open(isArray: Bool, maxLevels: Int) -> Bool {
            guard expectsValue, level < maxLevels else { return false }
            level += 1
            if isArray {
                objects &= ~(1 << UInt64(level))
                expect = Self.expectValueOrClose
            } else {
                objects |= 1 << UInt64(level)
                expect = Self.expectKeyOrClose
            }
            return true
        }

        /// A `}` or `]`: whether it closes the innermost container here (the level is left to `closed()`).
        @inline(__always)
        func closes(_ byte: UInt8) -> Bool {
            guard level > 0, inObject == (byte == UInt8(ascii: "}")) else { return false }
            let empty = inObject ? expect == Self.expectKeyOrClose : expect == Self.expectValueOrClose
            return empty || expect == Self.expectCommaOrClose
        }

        @inline(__always)
        mutating func closed() { level -= 1 }

        @inline(__always)
        mutating func comma() -> Bool {
            guard expect == Self.expectCommaOrClose else { return false }
            expect = inObject ? Self.expectKey : Self.expectValue
            return true
        }

        @inline(__always)
        mutating func colon() -> Bool {
            guard expect == Self.expectColon else { return false }
            expect = Self.expectValue
            return true
        }

        @inline(__always)
        mutating func keyEnded() { expect = Self.expectColon }

        @inline(__always)
        mutating func valueEnded() { expect = Self.expectCommaOrClose }
    }

    /// The literal (`true`, `null`, `false`) whose first byte `byte` is at `p`: its length, or `incomplete` or
    /// `reject`.
    @inline(__always)
    private static func literal(_ base: UnsafeRawPointer, _ p: Int, _ end: Int, _ byte: UInt8) -> Int {
        let length = byte == UInt8(ascii: "f") ? 5 : 4
        guard p + length <= end else { return incomplete }
        let word = base.loadUnaligned(fromByteOffset: p + length - 4, as: UInt32.self)
        let wanted: UInt32 =
            switch byte {
            case UInt8(ascii: "t"): 0x6575_7274  // "true"
            case UInt8(ascii: "n"): 0x6C6C_756E  // "null"
            default: 0x6573_6C61  // "alse"
            }
        return UInt32(littleEndian: word) == wanted ? length : reject
    }

    /// One element starting at `start`: its end, or `incomplete` (the input ends inside it) or `reject`. The
    /// grammar is checked here; `writer` makes the output (compact JSON, events or nothing) from the tokens.
    @inline(__always)
    private mutating func element<Writer: LaneWriter>(
        _ writer: inout Writer, _ base: UnsafeRawPointer, _ start: Int, _ end: Int, _ out: inout ByteBuffer,
        _ newlines: inout Int, _ lastNewline: inout Int
    ) -> Int {
        let outStart = out.count
        var p = start
        var grammar = Grammar()
        while true {
            if p >= end { return Self.incomplete }
            let byte = base.load(fromByteOffset: p, as: UInt8.self)
            var valueEnded = false
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                let from = p
                p = skipWhitespace(base, p, end, &newlines, &lastNewline)
                writer.whitespace(base, from: from, to: p, &out)
                continue
            case UInt8(ascii: "\""):
                let isKey = grammar.expectsKey
                guard isKey || grammar.expectsValue else { return Self.reject }
                let quote = p
                let text: UnsafeRawPointer
                let length: Int
                let close = plainString(base, p, end)
                if close >= 0 {
                    text = base + p + 1
                    length = close - p - 1
                    p = close + 1
                } else if close == Self.escaped {
                    let escapedEnd = escapedString(base, p, end)
                    guard escapedEnd >= 0 else { return escapedEnd }
                    text = decoded(base)
                    length = scratch.count
                    p = escapedEnd
                    writer.escapedString(base, quote: quote, after: p, text, length, &out)
                } else {
                    return close
                }
                if isKey {
                    writer.key(text, length, level: grammar.level, &out)
                    grammar.keyEnded()
                } else {
                    writer.valueStarts(grammar)
                    writer.string(text, length, &out)
                    valueEnded = true
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isArray = byte == UInt8(ascii: "[")
                guard grammar.expectsValue else { return Self.reject }
                writer.valueStarts(grammar)
                guard grammar.open(isArray: isArray, maxLevels: maxLevels),
                    writer.opened(isArray: isArray, level: grammar.level, outStart: outStart, &out)
                else { return Self.reject }
                p += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard grammar.closes(byte) else { return Self.reject }
                writer.closes(level: grammar.level, &out)
                grammar.closed()
                p += 1
                valueEnded = true
            case UInt8(ascii: ","):
                guard grammar.comma() else { return Self.reject }
                p += 1
            case UInt8(ascii: ":"):
                guard grammar.colon() else { return Self.reject }
                p += 1
            case UInt8(ascii: "t"), UInt8(ascii: "n"), UInt8(ascii: "f"):
                guard grammar.expectsValue else { return Self.reject }
                let length = Self.literal(base, p, end, byte)
                guard length >= 0 else { return length }
                p += length
                if grammar.level == 0 && !Self.endsBareElement(base, p, end) {
                    return p < end ? Self.reject : Self.incomplete
                }
                writer.valueStarts(grammar)
                writer.literal(byte == UInt8(ascii: "t") ? .true : byte == UInt8(ascii: "n") ? .null : .false, &out)
                valueEnded = true
            default:
                guard grammar.expectsValue else { return Self.reject }
                let numberEnd = number(base, p, end)
                guard numberEnd >= 0 else { return numberEnd }
                // The slow path hands out a bare number only once a byte it accepts follows it.
                if grammar.level == 0 && !Self.endsBareElement(base, numberEnd, end) { return Self.reject }
                writer.valueStarts(grammar)
                writer.number(base + p, numberEnd - p, &out)
                p = numberEnd
                valueEnded = true
            }
            if valueEnded {
                if grammar.level == 0 { return writer.ends(base, at: p, outStart: outStart, &out) ? p : Self.reject }
                grammar.valueEnded()
            }
        }
    }

    /// The string `escapedString` decoded (its bytes are in `scratch`).
    @inline(__always)
    private func decoded(_ base: UnsafeRawPointer) -> UnsafeRawPointer { UnsafeRawPointer(scratch.base) ?? base }

    /// An open container of an element recorded as events: where its header is, its entries so far and the
    /// key filter that tells whether an object's keys are all distinct (as `ParseState` keeps them).
    struct EventLevel {
        var header: Int
        var count: Int
        var keyFilter: UInt64
        var mayRepeatKeys: Bool
    }

    /// Whether the byte at `p` may follow an element that is a number or a literal: whitespace, a comma or
    /// the end of the array (anything else, such as a byte that is not UTF-8, is left to the slow path).
    @inline(__always)
    private static func endsBareElement(_ base: UnsafeRawPointer, _ p: Int, _ end: Int) -> Bool {
        guard p < end else { return false }
        switch base.load(fromByteOffset: p, as: UInt8.self) {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"): return true
        default: return false
        }
    }

    /// A number at `start` in JSON's grammar: its end (the input must go on past it, to show it ended), or
    /// `incomplete` or `reject`.
    @inline(__always)
    private func number(_ base: UnsafeRawPointer, _ start: Int, _ end: Int) -> Int {
        let found = digits(base, start, end)
        // A number the input ends inside is refused once it is past the limit: nothing long is held.
        if found == Self.incomplete && end - start > maxTokenBytes { return Self.reject }
        return found
    }

    @inline(__always)
    private func digits(_ base: UnsafeRawPointer, _ start: Int, _ end: Int) -> Int {
        @inline(__always) func at(_ k: Int) -> UInt8 { base.load(fromByteOffset: k, as: UInt8.self) }
        @inline(__always) func isDigit(_ b: UInt8) -> Bool { b &- 0x30 < 10 }
        var p = start
        if at(p) == UInt8(ascii: "-") {
            p += 1
            guard p < end else { return Self.incomplete }
        }
        let first = at(p)
        guard isDigit(first) else { return Self.reject }
        p += 1
        if first != UInt8(ascii: "0") {
            while p < end && isDigit(at(p)) { p += 1 }
        }
        guard p < end else { return Self.incomplete }
        if at(p) == UInt8(ascii: ".") {
            p += 1
            guard p < end else { return Self.incomplete }
            guard isDigit(at(p)) else { return Self.reject }
            while p < end && isDigit(at(p)) { p += 1 }
            guard p < end else { return Self.incomplete }
        }
        if at(p) | 0x20 == UInt8(ascii: "e") {
            p += 1
            guard p < end else { return Self.incomplete }
            if at(p) == UInt8(ascii: "+") || at(p) == UInt8(ascii: "-") {
                p += 1
                guard p < end else { return Self.incomplete }
            }
            guard isDigit(at(p)) else { return Self.reject }
            while p < end && isDigit(at(p)) { p += 1 }
            guard p < end else { return Self.incomplete }
        }
        return p - start > maxTokenBytes ? Self.reject : p
    }

    /// `plainString` found a backslash: the string needs decoding.
    private static let escaped = -3

    /// The closing quote of the string opening at `start` when it holds no escape, else `escaped`,
    /// `incomplete` or `reject`. Content bytes are checked as UTF-8 with no control characters.
    @inline(__always)
    private func plainString(_ base: UnsafeRawPointer, _ start: Int, _ end: Int) -> Int {
        var p = start + 1
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while true {
            while p + 8 <= end {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p, as: UInt64.self))
                let quotes = word ^ (ones &* 0x22)
                let backslashes = word ^ (ones &* 0x5C)
                // A byte is flagged when it is a quote, a backslash, below 0x20 or at least 0x80; borrows only
                // run upwards from the lowest flagged byte, so that one is exact.
                let special = (word | ((word &- ones &* 0x20) & ~word) | ((quotes &- ones) & ~quotes)
                    | ((backslashes &- ones) & ~backslashes)) & highs
                if special != 0 {
                    p += special.trailingZeroBitCount >> 3
                    break
                }
                p += 8
            }
            guard p < end else { return end - start - 1 > maxTokenBytes ? Self.reject : Self.incomplete }
            let byte = base.load(fromByteOffset: p, as: UInt8.self)
            if byte == 0x22 {
                return p - start - 1 > maxTokenBytes ? Self.reject : p
            }
            if byte == 0x5C { return Self.escaped }
            if byte < 0x20 { return Self.reject }
            if byte >= 0x80 {
                let length = Self.sequence(base, p, end)
                guard length > 0 else { return length == 0 ? Self.incomplete : Self.reject }
                p += length
            } else {
                p += 1
            }
        }
    }

    /// The length of the UTF-8 sequence at `p` (lead byte at least 0x80), 0 when the input ends inside it, or
    /// -1 when it is not valid (overlong, a surrogate, past U+10FFFF, a bad continuation byte).
    @inline(__always)
    private static func sequence(_ base: UnsafeRawPointer, _ p: Int, _ end: Int) -> Int {
        @inline(__always) func at(_ k: Int) -> UInt8 { base.load(fromByteOffset: p + k, as: UInt8.self) }
        let lead = at(0)
        let length: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, lo) = (3, 0xA0)
        case 0xED: (length, hi) = (3, 0x9F)
        case 0xE1...0xEF: length = 3
        case 0xF0: (length, lo) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, hi) = (4, 0x8F)
        default: return -1
        }
        guard p + length <= end else { return 0 }
        let second = at(1)
        guard second >= lo && second <= hi else { return -1 }
        if length > 2 && at(2) & 0xC0 != 0x80 { return -1 }
        if length > 3 && at(3) & 0xC0 != 0x80 { return -1 }
        return length
    }

    /// A string with escapes, opening at `start`: decoded into `scratch` as yajl decodes it. Returns the byte
    /// after its closing quote, `incomplete` or `reject`.
    private mutating func escapedString(_ base: UnsafeRawPointer, _ start: Int, _ end: Int) -> Int {
        @inline(__always) func at(_ k: Int) -> UInt8 { base.load(fromByteOffset: k, as: UInt8.self) }
        scratch.removeAll()
        var p = start + 1
        while true {
            guard p < end else { return end - start - 1 > maxTokenBytes ? Self.reject : Self.incomplete }
            let byte = at(p)
            switch byte {
            case 0x22:
                guard p - start - 1 <= maxTokenBytes else { return Self.reject }
                return p + 1
            case 0x5C:
                guard p + 1 < end else { return Self.incomplete }
                let escape = at(p + 1)
                switch escape {
                case 0x22, 0x5C, 0x2F: scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    let unit = hexUnit(base, p + 2, end)
                    guard unit >= 0 else { return unit == -1 ? Self.incomplete : Self.reject }
                    var scalar = UInt32(unit)
                    var length = 6
                    if (0xD800...0xDBFF).contains(unit) {
                        guard p + 8 <= end else { return Self.incomplete }
                        guard at(p + 6) == 0x5C, at(p + 7) == UInt8(ascii: "u") else { return Self.reject }
                        let low = hexUnit(base, p + 8, end)
                        guard low >= 0 else { return low == -1 ? Self.incomplete : Self.reject }
                        guard (0xDC00...0xDFFF).contains(low) else { return Self.reject }
                        scalar = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
                        length = 12
                    } else if (0xDC00...0xDFFF).contains(unit) {
                        return Self.reject
                    }
                    appendUTF8(scalar)
                    p += length
                    continue
                default:
                    return Self.reject
                }
                p += 2
            case 0x00..<0x20:
                return Self.reject
            case 0x80...:
                let length = Self.sequence(base, p, end)
                guard length > 0 else { return length == 0 ? Self.incomplete : Self.reject }
                scratch.append(base + p, length)
                p += length
            default:
                scratch.append(byte)
                p += 1
            }
        }
    }

    /// Four hex digits at `p`: their value, -1 when the input ends first, -2 when one is not a hex digit.
    @inline(__always)
    private func hexUnit(_ base: UnsafeRawPointer, _ p: Int, _ end: Int) -> Int {
        guard p + 4 <= end else { return -1 }
        var value = 0
        for k in 0..<4 {
            let byte = base.load(fromByteOffset: p + k, as: UInt8.self)
            let digit: Int
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = Int(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = Int(byte - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = Int(byte - UInt8(ascii: "A")) + 10
            default: return -2
            }
            value = value << 4 | digit
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

/// What the lane makes of an element's tokens, once `ItemScanner.element` has checked them (one specialization
/// per writer: no call per token at run time).
protocol LaneWriter {
    /// Whitespace from `from` to `to`.
    mutating func whitespace(_ base: UnsafeRawPointer, from: Int, to: Int, _ out: inout ByteBuffer)
    /// A string with escapes (from its `quote` to `after` its closing quote), decoded as `text`.
    mutating func escapedString(
        _ base: UnsafeRawPointer, quote: Int, after: Int, _ text: UnsafeRawPointer, _ length: Int,
        _ out: inout ByteBuffer)
    /// An object's key (decoded), in the object at `level`.
    mutating func key(_ text: UnsafeRawPointer, _ length: Int, level: Int, _ out: inout ByteBuffer)
    /// A value starts where `grammar` is (before a container it opens).
    mutating func valueStarts(_ grammar: ItemScanner.Grammar)
    mutating func string(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer)
    /// A container opened at `level`; false when the element must go to the slow path.
    mutating func opened(isArray: Bool, level: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool
    /// The container at `level` closes.
    mutating func closes(level: Int, _ out: inout ByteBuffer)
    mutating func literal(_ tag: EventTag, _ out: inout ByteBuffer)
    mutating func number(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer)
    /// The element ends at `p`; false when it is over the element limit (the slow path then fails it).
    mutating func ends(_ base: UnsafeRawPointer, at p: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool
}

extension LaneWriter {
    @inline(__always) mutating func whitespace(_ base: UnsafeRawPointer, from: Int, to: Int, _ out: inout ByteBuffer) {}
    @inline(__always) mutating func escapedString(
        _ base: UnsafeRawPointer, quote: Int, after: Int, _ text: UnsafeRawPointer, _ length: Int,
        _ out: inout ByteBuffer
    ) {}
    @inline(__always) mutating func key(_ text: UnsafeRawPointer, _ length: Int, level: Int, _ out: inout ByteBuffer) {}
    @inline(__always) mutating func valueStarts(_ grammar: ItemScanner.Grammar) {}
    @inline(__always) mutating func string(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer) {}
    @inline(__always) mutating func opened(isArray: Bool, level: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool {
        true
    }
    @inline(__always) mutating func closes(level: Int, _ out: inout ByteBuffer) {}
    @inline(__always) mutating func literal(_ tag: EventTag, _ out: inout ByteBuffer) {}
    @inline(__always) mutating func number(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer) {}
}

/// Elements only counted.
struct CountWriter: LaneWriter {
    @inline(__always)
    func ends(_ base: UnsafeRawPointer, at p: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool { true }
}

/// Compact JSON: the element's bytes copied as runs between whitespace; a string with escapes decoded and
/// escaped again the way `JSONEscaping` does.
struct JSONRunWriter: LaneWriter {
    /// Where the bytes not yet copied start.
    var run: Int
    let maxElementBytes: Int

    @inline(__always)
    mutating func whitespace(_ base: UnsafeRawPointer, from: Int, to: Int, _ out: inout ByteBuffer) {
        out.append(base + run, from - run)
        run = to
    }

    @inline(__always)
    mutating func escapedString(
        _ base: UnsafeRawPointer, quote: Int, after: Int, _ text: UnsafeRawPointer, _ length: Int,
        _ out: inout ByteBuffer
    ) {
        out.append(base + run, quote - run)
        JSONEscaping.appendQuoted(text, length, to: &out)
        run = after
    }

    @inline(__always)
    mutating func ends(_ base: UnsafeRawPointer, at p: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool {
        out.append(base + run, p - run)
        return out.count - outStart <= maxElementBytes
    }
}

/// Events, as `ParseState` records them (see `EventTag`): a tag per value, strings decoded, numbers as written,
/// each container's header patched when it closes, an object's repeated-keys flag found the same way.
struct EventWriter: LaneWriter {
    /// The open containers, by level (1...63).
    let levels: UnsafeMutablePointer<ItemScanner.EventLevel>
    let maxElementBytes: Int

    @inline(__always)
    mutating func key(_ text: UnsafeRawPointer, _ length: Int, level: Int, _ out: inout ByteBuffer) {
        let top = levels + level
        top.pointee.count += 1
        let bit = ParseState.keyBit(text, length)
        if top.pointee.keyFilter & bit != 0 && !top.pointee.mayRepeatKeys {
            top.pointee.mayRepeatKeys = ParseState.hasKey(text, length, inObjectAt: top.pointee.header, of: out)
        }
        top.pointee.keyFilter |= bit
        out.appendUInt32(UInt32(truncatingIfNeeded: length))
        out.append(text, length)
    }

    /// An array counts its values (an object counted its keys).
    @inline(__always)
    mutating func valueStarts(_ grammar: ItemScanner.Grammar) {
        if grammar.level > 0 && !grammar.inObject { levels[grammar.level].count += 1 }
    }

    @inline(__always)
    mutating func string(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer) {
        ParseState.writeEvent(.string, text, length, into: &out)
    }

    @inline(__always)
    mutating func opened(isArray: Bool, level: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool {
        levels[level] = ItemScanner.EventLevel(header: out.count, count: 0, keyFilter: 0, mayRepeatKeys: false)
        ParseState.writeContainerHeader(isArray, into: &out)
        // Headers are the one part of the events larger than their bytes in the input.
        return out.count <= outStart + maxElementBytes
    }

    @inline(__always)
    mutating func closes(level: Int, _ out: inout ByteBuffer) {
        let top = levels[level]
        ParseState.patchContainerHeader(at: top.header, count: top.count, mayRepeatKeys: top.mayRepeatKeys, in: &out)
    }

    @inline(__always)
    mutating func literal(_ tag: EventTag, _ out: inout ByteBuffer) { out.append(tag.rawValue) }

    @inline(__always)
    mutating func number(_ text: UnsafeRawPointer, _ length: Int, _ out: inout ByteBuffer) {
        ParseState.writeEvent(.number, text, length, into: &out)
    }

    @inline(__always)
    func ends(_ base: UnsafeRawPointer, at p: Int, outStart: Int, _ out: inout ByteBuffer) -> Bool {
        outStart + maxElementBytes >= out.count
    }
}
