/// The part of an ``EventDecoder`` that its keyed containers read for every field, at a fixed address: a
/// container reaches it through a plain pointer, where each use of the decoder's reference costs a retain and
/// a release around the call.
struct DecoderCore {
    var reader: EventReader
    /// Where the last key lookup ended, so that the next one, usually for the following key,
    /// starts there: the object, the entry after the match, and its index.
    var hintObject = -1
    var hintPosition = 0
    var hintIndex = 0
    var keyMode: EventDecoder.KeyMode
    /// The state of the keyed containers made for the value being decoded (see ``KeyedContainer``), by slot.
    var keyedStates: UnsafeMutablePointer<KeyedState>
    /// The paths of values nested under a key (see ``ChildPaths``).
    var childPaths = ChildPaths()
}

/// Reading scalars out of the event encoding: nil where the value is not of the type (the caller builds the
/// error, and the coding path, only then).
extension EventReader {
    @inline(__always)
    func boolIfValid(at offset: Int) -> Bool? {
        switch tag(at: offset) {
        case EventTag.true.rawValue: return true
        case EventTag.false.rawValue: return false
        default: return nil
        }
    }

    @inline(__always)
    func stringIfValid(at offset: Int) -> String? {
        guard tag(at: offset) == EventTag.string.rawValue else { return nil }
        return EventReader.string(payload(at: offset))
    }

    /// A number as a `Double` (strings, which a non-conforming float strategy may accept, are the caller's).
    @inline(__always)
    func numberAsDouble(at offset: Int) -> Double? {
        guard tag(at: offset) == EventTag.number.rawValue else { return nil }
        return NumberParsing.double(payload(at: offset))
    }

    @inline(__always)
    func integerIfValid<T: FixedWidthInteger>(at offset: Int) -> T? {
        guard tag(at: offset) == EventTag.number.rawValue,
            let (negative, magnitude) = NumberParsing.integer(payload(at: offset))
        else { return nil }
        if !negative { return T(exactly: magnitude) }
        if magnitude == 0 { return 0 }
        guard T.isSigned, magnitude <= UInt64(T.max) + 1 else { return nil }
        return T(truncatingIfNeeded: 0 &- magnitude)
    }

    /// `integerIfValid` for the most common types, without generic arithmetic.
    @inline(__always)
    func int64IfValid(at offset: Int) -> Int64? {
        guard tag(at: offset) == EventTag.number.rawValue,
            let (negative, magnitude) = NumberParsing.integer(payload(at: offset))
        else { return nil }
        if !negative { return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil }
        if magnitude <= UInt64(Int64.max) { return -Int64(magnitude) }
        return magnitude == UInt64(Int64.max) + 1 ? .min : nil
    }

    /// `[String]`, whose metadata is looked up in a table each time it is named (it is generic).
    static let stringArrayType = ObjectIdentifier([String].self)

    /// The array of strings at `offset`, or nil if it is something else.
    func stringsIfValid(at offset: Int) -> [String]? {
        guard tag(at: offset) == EventTag.array.rawValue else { return nil }
        let n = count(at: offset)
        var result: [String] = []
        result.reserveCapacity(n)
        var position = offset + EventTag.containerHeaderSize
        for _ in 0..<n {
            guard let string = stringIfValid(at: position) else { return nil }
            result.append(string)
            position = end(of: position)
        }
        return result
    }
}
