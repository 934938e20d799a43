/// The fast lane: when yajl opens the items array (and nothing watched goes inside its elements), the
/// extractor stops yajl there and `ItemScanner` takes the elements whole from the input, writing them as
/// compact JSON, recording them as events or counting them. When the lane meets anything it does not take (the
/// `]`, an error, a limit, an element deeper or larger than it handles), a new yajl handle is brought to the
/// same place and the slow path goes on from the last element boundary, so what it reports is what it always
/// reported.
extension JSONExtractor {
    /// Thrown from `parseUnit` up to `slowIngest` (which returns `rest`): yajl stopped after the items array's
    /// `[`; `rest` holds the bytes of the unit after it.
    struct LaneHandOff: Error {
        var rest: [UInt8]
    }

    /// Elements larger than this (as the lane waits for their end across chunks) are left to the slow path.
    static let laneCarryLimit = 1 << 20

    /// yajl stopped at `cut` in `unit` (just after the `[`): accounts for the bytes before it, starts the
    /// lane and throws the rest of the unit up to `slowIngest`, which returns it.
    func enterLane(_ unit: UnsafeRawBufferPointer, cut: Int, _ onElement: (JSONElement) throws -> Void) throws {
        state.pointee.handsOff = false
        try deliver(onElement)
        let taken = UnsafeRawBufferPointer(rebasing: unit[0..<cut])
        account(taken, newlines: taken.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }, lastNewline: taken.lastIndex(of: 0x0A))
        let parseState = state.pointee
        lane = ItemScanner(
            maxLevels: parseState.maxDepth - parseState.depth, maxTokenBytes: limits.maxTokenBytes,
            maxElementBytes: limits.maxElementBytes,
            form: form,
            afterValue: parseState.frames[parseState.depth].count > 0)
        throw LaneHandOff(rest: Array(unit[cut...]))
    }

    /// Bytes `taken` (from offset `parsed`) are read: moves the positions errors are located from past them.
    private func account(_ taken: UnsafeRawBufferPointer, newlines: Int, lastNewline: Int?) {
        if let lastNewline { parsedLastNewline = parsed + lastNewline }
        parsed += taken.count
        parsedNewlines += newlines
        recent.append(contentsOf: taken.suffix(32))
        if recent.count > 32 { recent.removeFirst(recent.count - 32) }
    }

    /// Feeds the lane. Returns nil when it took everything it could and waits for more, or the bytes from its
    /// last element boundary on, for the slow path, when it ended.
    func laneFeed(_ bytes: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void) throws -> [UInt8]? {
        guard laneCarry.isEmpty else { return try laneFeedCarried(bytes, onElement) }
        let result = try laneScan(bytes, onElement)
        let rest = UnsafeRawBufferPointer(rebasing: bytes[result.committed...])
        if result.exit || rest.count > Self.laneCarryLimit { return leaveLane(with: Array(rest)) }
        laneCarry.append(rest)
        return nil
    }

    /// The lane holds the start of an element from earlier chunks: adds bytes to it (doubling what it holds)
    /// until the element ends, then reads the rest of `bytes` in place.
    private func laneFeedCarried(
        _ bytes: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void
    ) throws -> [UInt8]? {
        var offset = 0
        while offset < bytes.count {
            let take = Swift.min(bytes.count - offset, Swift.max(laneCarry.count, 4096))
            let held = laneCarry.count
            laneCarry.append(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
            offset += take
            let result = try laneScan(laneCarry.bytes(0..<laneCarry.count), onElement)
            if result.exit {
                let rest = Array(laneCarry.bytes(result.committed..<laneCarry.count)) + bytes[offset...]
                laneCarry.removeAll()
                return leaveLane(with: rest)
            }
            if result.committed >= held {
                // The held element ended in these bytes: go on from its end in `bytes` itself.
                let resume = offset - take + (result.committed - held)
                laneCarry.removeAll()
                return try laneFeed(UnsafeRawBufferPointer(rebasing: bytes[resume...]), onElement)
            }
            laneCarry.removeFirst(result.committed)
            if laneCarry.count > Self.laneCarryLimit {
                let rest = Array(laneCarry.bytes(0..<laneCarry.count)) + bytes[offset...]
                laneCarry.removeAll()
                return leaveLane(with: rest)
            }
        }
        return nil
    }

    private func laneScan(
        _ input: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void
    ) throws -> ItemScanner.Result {
        guard var itemScanner = lane else { return ItemScanner.Result() }
        lane = nil
        let result = itemScanner.scan(input, into: &state.pointee.element, ends: &state.pointee.completedEnds)
        lane = itemScanner
        guard result.committed > 0 else { return result }
        account(
            UnsafeRawBufferPointer(rebasing: input[0..<result.committed]), newlines: result.newlines,
            lastNewline: result.lastNewline >= 0 ? result.lastNewline : nil)
        laneElements += result.elements
        state.pointee.elementCount += result.elements
        state.pointee.frames[state.pointee.depth].count += result.elements
        // Handed out once per feed by `route` (one copy per chunk, as the slow path makes), not per scan.
        return result
    }

    /// Ends the lane: a new yajl handle is brought into the items array (after an element when there was
    /// one) and the slow path's positions are set at the boundary. Returns `rest`, for the slow path.
    private func leaveLane(with rest: [UInt8]) -> [UInt8] {
        lane?.release()
        lane = nil
        let parseState = state.pointee
        state.pointee.laneAllowed = false
        var prefix: [UInt8] = []
        for level in 1...Swift.max(1, parseState.depth) {
            prefix += parseState.frames[level].isArray ? Array("[".utf8) : Array("{\"\":".utf8)
        }
        let afterElement = parseState.frames[parseState.depth].count > 0
        if afterElement { prefix += Array("null".utf8) }
        parser.restart(prefix: prefix)
        scanner.rewind(to: parsed)
        bare.reset()
        heldBytes = 0
        unitStartsInString = false
        unitStartsEscaped = false
        followsValue = afterElement
        return rest
    }

    /// At the end of the document: the lane hands what it holds to the slow path, which then completes.
    func leaveLaneAtEnd(_ onElement: (JSONElement) throws -> Void) throws {
        state.pointee.laneAllowed = false
        guard lane != nil else { return }
        let rest = leaveLane(with: Array(laneCarry.bytes(0..<laneCarry.count)))
        laneCarry.removeAll()
        try deliver(onElement)
        try rest.withUnsafeBytes { _ = try slowIngest($0, onElement) }
    }
}
