/// The boundaries of yajl's tokens outside strings (numbers and the literals `true`, `false`, `null`),
/// followed through a run of bytes with no whitespace, structural character or quote. yajl can hold such a
/// token across calls (a number is complete only when the byte after it arrives); the extractor measures it
/// exactly, so that the single-token limit applies to its length wherever the chunks end.
struct BareTokens {
    /// Where the token being read is, in yajl's number grammar or a literal.
    enum State: Equatable {
        case none, minus, zero, integer, dot, fraction, exponent, exponentSign, exponentDigits
        case literal(remaining: Int)
        /// A byte yajl does not take: it reports an error there.
        case invalid
    }

    private(set) var state = State.none
    /// The absolute offset of the token being read.
    private(set) var start = 0

    /// The byte ends a run (whitespace, structure, a quote).
    @inline(__always)
    static func isBoundary(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, 0x22, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D: return true
        default: return false
        }
    }

    /// Nothing is being read: a boundary was seen.
    mutating func reset() { state = .none }

    /// Reads the byte at absolute `at` (not a boundary).
    mutating func read(_ byte: UInt8, at: Int) {
        if state != .none, let next = Self.next(state, byte) {
            state = next
        } else {
            start = at
            state = Self.next(.none, byte) ?? .invalid
        }
    }

    /// The state after `byte`, or nil when the token ended before it.
    static func next(_ state: State, _ byte: UInt8) -> State? {
        let digit = byte >= 0x30 && byte <= 0x39
        let exponentMark = byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        switch state {
        case .none:
            if byte == UInt8(ascii: "-") { return .minus }
            if byte == UInt8(ascii: "0") { return .zero }
            if digit { return .integer }
            switch byte {
            case UInt8(ascii: "t"), UInt8(ascii: "n"): return .literal(remaining: 3)
            case UInt8(ascii: "f"): return .literal(remaining: 4)
            default: return .invalid
            }
        case .minus:
            return byte == UInt8(ascii: "0") ? .zero : digit ? .integer : .invalid
        case .zero:
            return byte == UInt8(ascii: ".") ? .dot : exponentMark ? .exponent : nil
        case .integer:
            return digit ? .integer : byte == UInt8(ascii: ".") ? .dot : exponentMark ? .exponent : nil
        case .dot:
            return digit ? .fraction : .invalid
        case .fraction:
            return digit ? .fraction : exponentMark ? .exponent : nil
        case .exponent:
            if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") { return .exponentSign }
            return digit ? .exponentDigits : .invalid
        case .exponentSign:
            return digit ? .exponentDigits : .invalid
        case .exponentDigits:
            return digit ? .exponentDigits : nil
        case .literal(let remaining):
            return remaining > 0 ? .literal(remaining: remaining - 1) : nil
        case .invalid:
            return nil  // one byte: yajl stops there
        }
    }

    /// Follows the bytes of `bytes` (at absolute `origin`) from the last boundary among them, or from the
    /// state carried in when there is none. Returns the length of the token being read at their end, 0 if none.
    mutating func follow(_ bytes: UnsafeRawBufferPointer, at origin: Int) -> Int {
        var first = bytes.count
        while first > 0 && !Self.isBoundary(bytes[first - 1]) { first -= 1 }
        if first > 0 { state = .none }
        guard first < bytes.count else { return 0 }
        for k in first..<bytes.count { read(bytes[k], at: origin + k) }
        if state == .none || state == .literal(remaining: 0) { return 0 }
        return origin + bytes.count - start
    }
}
