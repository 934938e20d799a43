/// Checks the raw input ahead of yajl, which lets overlong UTF-8, encoded surrogates and lone
/// `\u` surrogate escapes through and treats `\v` and `\f` as whitespace.
///
/// Valid JSON text is UTF-8 throughout and holds no raw control characters other than tab, line
/// feed and carriage return, so the whole stream is validated without knowing where strings are.
/// Every backslash is read as the start of an escape: outside a string it is a syntax error that
/// yajl reports first. Line feeds are counted on the way for error positions.
///
/// It also follows strings (unescaped quotes open and close them) so that a string longer than the
/// single-token limit is refused at one fixed byte of the document, the first one past the limit,
/// however the document is cut into chunks (see `StringTracking`).
struct InputScanner {
    enum Failure: Equatable {
        case invalidUTF8(String)
        case controlCharacter(UInt8)
        case loneSurrogate(UInt16)
        /// A string whose content runs past the token limit; it opened at `start`.
        case stringTooLarge(start: Int)
    }

    /// The outcome of scanning one piece.
    struct Result {
        /// The number of bytes before the one where a failure was detected (all of them if none).
        var validCount: Int
        /// The failure, and the absolute offset it is reported at.
        var failure: (Failure, offset: Int)?
        /// Line feeds among the valid bytes, and the absolute offset of the last one.
        var newlines: Int
        var lastNewline: Int?
    }

    private enum State {
        case idle
        /// Inside a multi-byte UTF-8 sequence: `remaining` continuation bytes, the first in `lo...hi`.
        case sequence(remaining: Int, lo: UInt8, hi: UInt8, start: Int)
        case escape
        /// Reading the digits of a `\u` escape; `high` is the high surrogate it must complete.
        case hex(digits: Int, value: UInt16, high: (value: UInt16, start: Int)?, start: Int)
        case lowBackslash(high: UInt16, start: Int)
        case lowU(high: UInt16, start: Int)
    }

    private var state = State.idle {
        didSet { isIdle = if case .idle = state { true } else { false } }
    }
    private var isIdle = true
    /// The last byte scanned is a backslash: the next one is escaped.
    var awaitsEscapedByte: Bool { if case .escape = state { true } else { false } }
    /// Bytes scanned so far.
    private(set) var offset = 0
    /// Where strings are, for the token limit.
    private(set) var strings: StringTracking

    init(maxTokenBytes: Int = JSONLimits().maxTokenBytes) {
        strings = StringTracking(maxContent: maxTokenBytes)
    }

    /// Moves to absolute `offset`, a boundary between tokens outside strings (where the fast lane took or
    /// leaves the input): nothing is carried over from the bytes scanned before.
    mutating func rewind(to offset: Int) {
        state = .idle
        self.offset = offset
        strings.reset()
    }

    /// Scans `bytes`, which follow everything scanned before.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Result {
        guard let base = bytes.baseAddress else {
            return Result(validCount: 0, failure: nil, newlines: 0, lastNewline: nil)
        }
        let n = bytes.count
        var i = 0
        var newlines = 0
        var lastNewline = -1
        while i < n {
            if isIdle {
                i = strings.skipPlain(base, from: i, count: n, at: offset)
                if let overrun = strings.overrun(before: offset + i) { return stop(base, overrun) }
                if i >= n { break }
            }
            let byte = base.load(fromByteOffset: i, as: UInt8.self)
            if isIdle {
                if byte == 0x0A {
                    newlines += 1
                    lastNewline = i
                    i += 1
                    continue
                }
                if byte >= 0x80, let length = Self.completeSequence(base, at: i, count: n, lead: byte) {
                    i += length
                    continue
                }
            }
            if let failure = step(byte, at: offset + i) {
                // A string already past the limit before this byte is reported first.
                if let overrun = strings.overrun(before: offset + i + 1) { return stop(base, overrun) }
                return stop(base, failure, validCount: i)
            }
            i += 1
        }
        if let overrun = strings.overrun(before: offset + n) { return stop(base, overrun) }
        let start = offset
        offset += n
        return Result(
            validCount: n, failure: nil, newlines: newlines,
            lastNewline: lastNewline >= 0 ? start + lastNewline : nil)
    }

    /// Ends the scan at `failure`, detected after `validCount` bytes of this piece (by default at its offset),
    /// with the line feeds before it.
    private mutating func stop(
        _ base: UnsafeRawPointer, _ failure: (Failure, offset: Int), validCount: Int? = nil
    ) -> Result {
        let valid = validCount ?? failure.offset - offset
        var newlines = 0
        var lastNewline: Int?
        for k in 0..<valid where base.load(fromByteOffset: k, as: UInt8.self) == 0x0A {
            newlines += 1
            lastNewline = offset + k
        }
        offset += valid
        return Result(validCount: valid, failure: failure, newlines: newlines, lastNewline: lastNewline)
    }

    /// The length of the valid multi-byte sequence at `i` when it lies wholly in the buffer;
    /// nil to let the state machine handle it (and report what is wrong).
    @inline(__always)
    private static func completeSequence(_ base: UnsafeRawPointer, at i: Int, count n: Int, lead: UInt8) -> Int? {
        @inline(__always) func byte(_ k: Int) -> UInt8 { base.load(fromByteOffset: i + k, as: UInt8.self) }
        @inline(__always) func isContinuation(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }
        if lead >= 0xC2 && lead <= 0xDF {
            return i + 1 < n && isContinuation(byte(1)) ? 2 : nil
        }
        if lead >= 0xE0 && lead <= 0xEF {
            guard i + 2 < n else { return nil }
            let b1 = byte(1)
            let lo: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
            let hi: UInt8 = lead == 0xED ? 0x9F : 0xBF
            return b1 >= lo && b1 <= hi && isContinuation(byte(2)) ? 3 : nil
        }
        if lead >= 0xF0 && lead <= 0xF4 {
            guard i + 3 < n else { return nil }
            let b1 = byte(1)
            let lo: UInt8 = lead == 0xF0 ? 0x90 : 0x80
            let hi: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
            return b1 >= lo && b1 <= hi && isContinuation(byte(2)) && isContinuation(byte(3)) ? 4 : nil
        }
        return nil
    }

    /// Advances the state machine by one byte at absolute offset `at`.
    private mutating func step(_ byte: UInt8, at: Int) -> (Failure, offset: Int)? {
        switch state {
        case .idle:
            return stepIdle(byte, at: at)
        case let .sequence(remaining, lo, hi, start):
            guard byte >= lo && byte <= hi else {
                return (.invalidUTF8(Self.describeBadContinuation(lo: lo, hi: hi, byte: byte)), start)
            }
            state = remaining == 1 ? .idle : .sequence(remaining: remaining - 1, lo: 0x80, hi: 0xBF, start: start)
        case .escape:
            state = byte == UInt8(ascii: "u") ? .hex(digits: 0, value: 0, high: nil, start: at - 1) : .idle
        case let .hex(digits, value, high, start):
            guard let digit = Self.hexValue(byte) else {
                state = .idle  // yajl reports the bad escape
                return stepIdle(byte, at: at)
            }
            let newValue = value << 4 | UInt16(digit)
            if digits < 3 {
                state = .hex(digits: digits + 1, value: newValue, high: high, start: start)
            } else if let high {
                guard (0xDC00...0xDFFF).contains(newValue) else { return (.loneSurrogate(high.value), high.start) }
                state = .idle
            } else if (0xD800...0xDBFF).contains(newValue) {
                state = .lowBackslash(high: newValue, start: start)
            } else if (0xDC00...0xDFFF).contains(newValue) {
                return (.loneSurrogate(newValue), start)
            } else {
                state = .idle
            }
        case let .lowBackslash(high, start):
            guard byte == 0x5C else { return (.loneSurrogate(high), start) }
            state = .lowU(high: high, start: start)
        case let .lowU(high, start):
            guard byte == UInt8(ascii: "u") else { return (.loneSurrogate(high), start) }
            state = .hex(digits: 0, value: 0, high: (high, start), start: at - 1)
        }
        return nil
    }

    private mutating func stepIdle(_ byte: UInt8, at: Int) -> (Failure, offset: Int)? {
        switch byte {
        case 0x5C:
            state = .escape
        case 0x22:
            strings.quote(at: at)
        case 0x09, 0x0A, 0x0D, 0x20..<0x80:
            break
        case 0x00..<0x20:
            return (.controlCharacter(byte), at)
        case 0xC2...0xDF:
            state = .sequence(remaining: 1, lo: 0x80, hi: 0xBF, start: at)
        case 0xE0:
            state = .sequence(remaining: 2, lo: 0xA0, hi: 0xBF, start: at)
        case 0xED:
            state = .sequence(remaining: 2, lo: 0x80, hi: 0x9F, start: at)
        case 0xE1...0xEF:
            state = .sequence(remaining: 2, lo: 0x80, hi: 0xBF, start: at)
        case 0xF0:
            state = .sequence(remaining: 3, lo: 0x90, hi: 0xBF, start: at)
        case 0xF1...0xF3:
            state = .sequence(remaining: 3, lo: 0x80, hi: 0xBF, start: at)
        case 0xF4:
            state = .sequence(remaining: 3, lo: 0x80, hi: 0x8F, start: at)
        case 0x80...0xBF:
            return (.invalidUTF8("unexpected continuation byte 0x\(Self.hex(byte))"), at)
        case 0xC0, 0xC1:
            return (.invalidUTF8("overlong encoding"), at)
        default:
            return (.invalidUTF8("invalid byte 0x\(Self.hex(byte))"), at)
        }
        return nil
    }

    private static func describeBadContinuation(lo: UInt8, hi: UInt8, byte: UInt8) -> String {
        guard byte >= 0x80 && byte <= 0xBF else { return "truncated multi-byte sequence" }
        if lo == 0xA0 || lo == 0x90 { return "overlong encoding" }
        if hi == 0x9F { return "encoded surrogate" }
        return "code point above U+10FFFF"
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
