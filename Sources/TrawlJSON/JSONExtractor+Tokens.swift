/// The single-token limit, applied at fixed bytes of the document: a string is refused by the scanner at the
/// first content byte past the limit, a number (or another run outside strings) at the first byte past the
/// limit too, whether the chunk it is in ends inside it (`checkHeldToken`), yajl completes it (a callback) or
/// objects to it (`bareOverrun`). Whitespace is not a token and never counts.
extension JSONExtractor {
    var tokenLimitMessage: String { "a single token is larger than the \(Self.size(limits.maxTokenBytes)) limit" }

    /// After yajl took `unit` (at offset `parsed`) without error: measures the token it holds unfinished.
    func checkHeldToken(_ unit: UnsafeRawBufferPointer) throws {
        let carried = unitStartsInString || bare.state != .none
        defer { noteFollowsValue(unit, carried: carried) }
        if scanner.strings.inString {
            bare.reset()
            heldBytes = parsed + unit.count - scanner.strings.start
            return
        }
        heldBytes = bare.follow(unit, at: parsed)
        if heldBytes > limits.maxTokenBytes {
            throw makeError(.tooLarge, tokenLimitMessage, at: bare.start + limits.maxTokenBytes, unit: unit)
        }
    }

    /// Whether a value comes before the token held at the end of `unit` (or before the unit's end when none is
    /// held), from the last byte before it that is not whitespace: for `tokenSteppedBack`.
    /// `carried`: the unit began inside a token (a value) held from before it.
    private func noteFollowsValue(_ unit: UnsafeRawBufferPointer, carried: Bool) {
        let held = scanner.strings.inString ? scanner.strings.start : heldBytes > 0 ? bare.start : parsed + unit.count
        var k = held - parsed - 1
        while k >= 0 && Self.isWhitespace(unit[k]) { k -= 1 }
        if k >= 0 {
            let byte = unit[k]
            followsValue = byte != 0x3A && byte != 0x2C && byte != 0x5B && byte != 0x7B
        } else if held >= parsed && carried {
            followsValue = true
        }
    }

    /// The error for a token outside strings that yajl objects to at absolute `end` (the byte it rejects, or
    /// just after the token it rejects) when that token already ran past the limit.
    func bareOverrun(endingAt end: Int, unit: UnsafeRawBufferPointer?) -> JSONError? {
        var probe = bare
        // What is held counts only when it is a bare token: a held string (`bare` was reset for it) is the
        // scanner's to measure, and one of exactly the limit is no overrun.
        var length = bare.state == .none ? 0 : heldBytes
        if let unit, end > parsed, end - parsed <= unit.count {
            length = probe.follow(UnsafeRawBufferPointer(rebasing: unit[0..<(end - parsed)]), at: parsed)
        }
        guard length > limits.maxTokenBytes else { return nil }
        return makeError(.tooLarge, tokenLimitMessage, at: probe.start + limits.maxTokenBytes, unit: unit)
    }

    /// Where a number yajl completed past the limit starts: in the input being parsed, held from before, or
    /// (yajl then hands it over from its own buffer) first in the unit after any whitespace.
    func tokenOverrunOffset(startInInput: Int?, unit: UnsafeRawBufferPointer?) -> Int {
        var start = bare.start
        if let startInInput {
            start = parsed + startInInput
        } else if bare.state == .none, let unit {
            start = parsed + (unit.firstIndex { !Self.isWhitespace($0) } ?? 0)
        }
        return start + limits.maxTokenBytes
    }

    /// The token yajl objected to when it stepped its offset back to `stepped` (in `unit`): the first token of
    /// the unit, after a value, that lands there (absolute start and end). The unit is lexed again from the
    /// state its first byte was in (a string or a token outside strings carried over from earlier bytes).
    func tokenSteppedBack(to stepped: Int, unit: UnsafeRawBufferPointer) -> (start: Int, end: Int)? {
        firstToken(in: unit) { start, end, isString, afterValue in
            let length = parsed + end - start - (isString ? 2 : 0)
            return afterValue && (end >= length ? end - length : 0) == stepped
        }
    }

    /// The start of the token of `unit` that ends at absolute `end`, or else of the one holding the byte before
    /// `end` (yajl rejected it before its end: a raw control character inside a string), when there is one.
    func tokenStart(endingExactlyAt end: Int, unit: UnsafeRawBufferPointer) -> Int? {
        if let exact = firstToken(in: unit, where: { _, tokenEnd, _, _ in parsed + tokenEnd == end }) {
            return exact.start
        }
        return firstToken(in: unit) { start, tokenEnd, _, _ in start < end && end <= parsed + tokenEnd }?.start
    }

    /// The first token of `unit` (absolute start, end in the unit, whether a string, whether it follows a value)
    /// that `matches`, lexed from the state the unit's first byte was in.
    private func firstToken(
        in unit: UnsafeRawBufferPointer, where matches: (Int, Int, Bool, Bool) -> Bool
    ) -> (start: Int, end: Int)? {
        var inString = unitStartsInString
        var start = inString ? unitStringStart : bare.start
        var escaped = inString && unitStartsEscaped
        var probe = bare
        var reading = !inString && bare.state != .none
        // What `checkHeldToken` saw before the unit's first token.
        var afterValue = followsValue
        var position = 0
        func landsThere(end: Int, isString: Bool) -> Bool { matches(start, end, isString, afterValue) }
        while position < unit.count {
            let byte = unit[position]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                    if landsThere(end: position + 1, isString: true) { return (start, parsed + position + 1) }
                    afterValue = true
                }
                position += 1
                continue
            }
            if reading {
                if probe.state != .none, BareTokens.next(probe.state, byte) != nil, !BareTokens.isBoundary(byte) {
                    probe.read(byte, at: parsed + position)
                    position += 1
                    continue
                }
                reading = false
                // A literal held complete from the unit before was taken by yajl there (it never waits for the
                // byte after one, as it does after a number): it is not what yajl rejects in this unit.
                let takenBefore = position == 0 && probe.state == .literal(remaining: 0)
                if !takenBefore && landsThere(end: position, isString: false) { return (start, parsed + position) }
                afterValue = true
                probe.reset()
            }
            start = parsed + position
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                break
            case 0x22:
                inString = true
            case 0x5B, 0x7B, 0x2C, 0x3A, 0x5D, 0x7D:
                if landsThere(end: position + 1, isString: false) { return (start, parsed + position + 1) }
                afterValue = byte == 0x5D || byte == 0x7D
            default:
                reading = true
                probe.read(byte, at: start)
            }
            position += 1
        }
        if reading && landsThere(end: unit.count, isString: false) { return (start, parsed + unit.count) }
        // A string still open at the unit's end runs on past it.
        if inString && matches(start, Int.max / 2, true, afterValue) { return (start, Int.max / 2) }
        return nil
    }
}
