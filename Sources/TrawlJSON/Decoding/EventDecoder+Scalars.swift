/// Reading scalars out of the event encoding, with `JSONDecoder`'s errors.
extension EventDecoder {
    // The `…IfValid` readers return nil where the typed ones throw; callers that know the key
    // build the error (and the coding path) only then.

    @inline(__always)
    func boolIfValid(at offset: Int) -> Bool? { reader.boolIfValid(at: offset) }

    @inline(__always)
    func stringIfValid(at offset: Int) -> String? { reader.stringIfValid(at: offset) }

    func doubleIfValid(at offset: Int) -> Double? {
        let tag = reader.tag(at: offset)
        if tag == EventTag.number.rawValue { return NumberParsing.double(reader.payload(at: offset)) }
        if tag == EventTag.string.rawValue { return nonConforming(at: offset) }
        return nil
    }

    func floatIfValid(at offset: Int) -> Float? {
        let tag = reader.tag(at: offset)
        if tag == EventTag.number.rawValue { return NumberParsing.float(reader.payload(at: offset)) }
        if tag == EventTag.string.rawValue { return nonConforming(at: offset).map { Float($0) } }
        return nil
    }

    @inline(__always)
    func integerIfValid<T: FixedWidthInteger>(at offset: Int) -> T? { reader.integerIfValid(at: offset) }

    /// Why the value at `offset` is not a `type`: the wrong kind of value, or a number out of range.
    func failure(_ type: Any.Type, at offset: Int, path: CodingPath) -> DecodingError {
        guard reader.tag(at: offset) == EventTag.number.rawValue, type != Bool.self, type != String.self else {
            return mismatch(type, at: offset, path: path)
        }
        let text = EventReader.string(reader.payload(at: offset))
        if type == Double.self || type == Float.self {
            return corrupted("Number \(text) is not representable as \(type).", path: path)
        }
        return corrupted("Number \(text) does not fit in \(type).", path: path)
    }

    func bool(at offset: Int, path: @autoclosure () -> CodingPath) throws -> Bool {
        if let value = boolIfValid(at: offset) { return value }
        throw failure(Bool.self, at: offset, path: path())
    }

    func string(at offset: Int, path: @autoclosure () -> CodingPath) throws -> String {
        if let value = stringIfValid(at: offset) { return value }
        throw failure(String.self, at: offset, path: path())
    }

    func double(at offset: Int, path: @autoclosure () -> CodingPath) throws -> Double {
        if let value = doubleIfValid(at: offset) { return value }
        throw failure(Double.self, at: offset, path: path())
    }

    func float(at offset: Int, path: @autoclosure () -> CodingPath) throws -> Float {
        if let value = floatIfValid(at: offset) { return value }
        throw failure(Float.self, at: offset, path: path())
    }

    func integer<T: FixedWidthInteger>(at offset: Int, path: @autoclosure () -> CodingPath) throws -> T {
        if let value: T = integerIfValid(at: offset) { return value }
        throw failure(T.self, at: offset, path: path())
    }

    func nonConforming(at offset: Int) -> Double? {
        guard case let .convertFromString(positiveInfinity, negativeInfinity, nan) =
            options.nonConformingFloatDecodingStrategy
        else { return nil }
        let text = EventReader.string(reader.payload(at: offset))
        if text == positiveInfinity { return .infinity }
        if text == negativeInfinity { return -.infinity }
        if text == nan { return .nan }
        return nil
    }

    // MARK: - Errors

    func mismatch(_ type: Any.Type, at offset: Int, path: CodingPath) -> DecodingError {
        let found: String
        switch reader.tag(at: offset) {
        case EventTag.null.rawValue:
            return DecodingError.valueNotFound(type, .init(
                codingPath: path.keys, debugDescription: "Expected \(type) value but found null instead."))
        case EventTag.true.rawValue, EventTag.false.rawValue: found = "bool"
        case EventTag.number.rawValue: found = "number \(EventReader.string(reader.payload(at: offset)))"
        case EventTag.string.rawValue: found = "a string"
        case EventTag.array.rawValue: found = "an array"
        default: found = "a dictionary"
        }
        return DecodingError.typeMismatch(type, .init(
            codingPath: path.keys, debugDescription: "Expected to decode \(type) but found \(found) instead."))
    }

    func corrupted(_ message: String, path: CodingPath) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: path.keys, debugDescription: message))
    }
}
