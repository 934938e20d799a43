/// Streams the elements of the collection at a key path out of a JSON document fed in chunks,
/// and captures side fields (pagination cursors, totals) in the same pass.
///
/// Feed it bytes as they arrive, in chunks of any size; each `feed` hands out the elements that
/// chunk completed. `finish` ends the document and returns what was captured:
///
/// ```swift
/// let extractor = try JSONExtractor(path: "data", capture: ["has_more", "data.-1.id"])
/// for try await chunk in response.body {
///     try extractor.feed(chunk) { element in
///         sink.write(element.json)                   // or element.decode(Item.self)
///     }
/// }
/// let summary = try extractor.finish()
/// summary.captured["data.-1.id"]                      // the id of the last element, for the next page
/// ```
///
/// If the value at the path is an array, its elements are handed out; if it is an object or a
/// scalar, that value is the one element; `Summary.collection` tells these apart from a missing
/// path. If the path matches more than once (duplicate keys), every occurrence is handed out. For
/// captured fields the last occurrence wins.
///
/// Memory stays bounded by the largest element (plus one chunk), whatever the document's size.
/// Errors are `JSONError`s saying what and where; elements completed before an error have been
/// handed out when it is thrown, and every later call throws the same error. An extractor reads
/// one document and is not thread-safe.
public final class JSONExtractor {
    /// How elements are recorded.
    public enum Form: Sendable, Hashable {
        /// As compact JSON (fastest for `JSONElement.json`, e.g. to write JSON Lines).
        case json
        /// As parser events (fastest for `JSONElement.decode` and `JSONElement.value`).
        case values
        /// Not at all: elements are only counted (`onElement` is never called).
        case countOnly
    }

    /// What the whole document held, returned by `finish`.
    public struct Summary: Sendable, Hashable {
        /// What the item path named.
        public enum Collection: Sendable, Hashable {
            /// An array, whose elements were handed out (possibly none).
            case array
            /// An object or a scalar, handed out as the one element.
            case value
            /// Nothing: the path is not in the document.
            case missing
        }

        public var collection: Collection
        /// The number of elements handed out (or counted).
        public var elementCount: Int
        /// The captured side fields that were present (`JSONValue.null` for an explicit null).
        public var captured: [JSONKeyPath: JSONValue]
        /// The size of the document in bytes.
        public var byteCount: Int
    }

    /// The key path of the collection.
    public let path: JSONKeyPath
    /// The key paths of the side fields captured.
    public let capturePaths: [JSONKeyPath]
    /// How elements are recorded.
    public let form: Form
    let limits: JSONLimits
    let parser: YajlParser
    var state: UnsafeMutablePointer<ParseState> { parser.state }

    var scanner: InputScanner
    /// Scanned bytes not yet given to yajl, held to coalesce the pieces of a long token.
    var pending = ByteBuffer()
    var pendingNewlines = 0
    var pendingLastNewline: Int?
    /// The first bytes of the document, for diagnosis.
    var head: [UInt8] = []
    var headChecked = false
    var sawContent = false
    var received = 0
    /// Bytes given to yajl, with the line feeds among them.
    var parsed = 0
    var parsedNewlines = 0
    var parsedLastNewline: Int?
    /// The last bytes given to yajl, for excerpts.
    var recent: [UInt8] = []
    /// The bytes of the token yajl holds unfinished at `parsed` (a long string or number being assembled),
    /// and the boundaries of the tokens outside strings, followed across calls.
    var heldBytes = 0
    var bare = BareTokens()
    /// Whether the bytes at `parsed` are inside a string, opened at `unitStringStart`.
    var followsValue = false
    var unitStartsInString = false
    var unitStringStart = 0
    var unitStartsEscaped = false
    var delivered = 0
    /// Where `feed(_:appendingLinesTo:)` appends the completed elements, during that call.
    var lineSink: UnsafeMutablePointer<[UInt8]>?
    var terminalError: (any Error)?
    var finished = false
    /// The fast lane for the items array's elements while it reads them (see `ItemScanner`), and the bytes
    /// from its last element boundary that it needs more input to go on with.
    var lane: ItemScanner?
    var laneCarry = ByteBuffer()
    /// How many elements the lane took (for tests: the lane must not be turned off unnoticed).
    var laneElements = 0

    /// Creates an extractor for the collection at `path`, capturing the fields at `capture`.
    ///
    /// - Throws: `JSONError` with code `.invalidKeyPath` if `path` has a negative index (its
    ///   elements could not be streamed) or a capture path has more than one.
    public convenience init(
        path: JSONKeyPath = .root, capture: [JSONKeyPath] = [], form: Form = .json, limits: JSONLimits = .init()
    ) throws {
        try self.init(path: path, capture: capture, form: form, limits: limits, wholeValue: false)
    }

    /// With `wholeValue`, the value at `path` is the one element even when it is an array.
    init(
        path: JSONKeyPath, capture: [JSONKeyPath], form: Form, limits: JSONLimits, wholeValue: Bool,
        fastLane: Bool = true
    ) throws {
        if path.components.contains(where: { if case .index(let i) = $0 { i < 0 } else { false } }) {
            throw JSONError(
                code: .invalidKeyPath,
                message: "the item path \(path) has a negative index: capture it as a side field instead")
        }
        var distances: [Int] = []
        for capturePath in capture {
            let negatives = capturePath.components.compactMap { component -> Int? in
                if case .index(let i) = component, i < 0 { return -i }
                return nil
            }
            guard negatives.count <= 1 else {
                throw JSONError(
                    code: .invalidKeyPath, message: "the capture path \(capturePath) has more than one negative index")
            }
            distances.append(negatives.first ?? 0)
        }
        self.path = path
        self.capturePaths = capture
        self.form = form
        self.limits = limits
        scanner = InputScanner(maxTokenBytes: limits.maxTokenBytes)
        let matcher = PathMatcher.compiled(items: path, captures: capture)
        parser = YajlParser(state: ParseState(
            matcher: matcher, captureDistances: distances, form: form, limits: limits, wholeValue: wholeValue))
        // Tiny token limits are left to the slow path, which also measures literals cut across chunks.
        state.pointee.laneAllowed = fastLane && !wholeValue && limits.maxTokenBytes >= 8
    }

    deinit {
        pending.release()
        laneCarry.release()
        lane?.release()
    }

    /// The number of bytes fed so far.
    public var byteCount: Int { received }

    /// Parses the next bytes of the document, calling `onElement` for each element they complete.
    ///
    /// - Throws: `JSONError` when the document is invalid or exceeds a limit, or what `onElement`
    ///   throws. Either way the extraction is over.
    public func feed<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes, onElement: (JSONElement) throws -> Void = { _ in }
    ) throws {
        if let terminalError { throw terminalError }
        precondition(!finished, "JSONExtractor.feed called after finish")
        do {
            let done: Void? = try bytes.withContiguousStorageIfAvailable { buffer in
                try ingest(UnsafeRawBufferPointer(buffer), onElement)
            }
            if done == nil {
                try Array(bytes).withUnsafeBytes { try ingest($0, onElement) }
            }
        } catch {
            terminalError = error
            throw error
        }
    }

    /// Ends the document: parses what is left, checks the document is complete, and returns what
    /// it held.
    public func finish(onElement: (JSONElement) throws -> Void = { _ in }) throws -> Summary {
        if let terminalError { throw terminalError }
        precondition(!finished, "JSONExtractor.finish called twice")
        finished = true
        do {
            try leaveLaneAtEnd(onElement)
            headChecked = true
            try parsePending(onElement)
            let outcome = parser.complete()
            try deliver(onElement)
            try check(outcome, unit: nil)
        } catch {
            terminalError = error
            throw error
        }
        let parseState = state.pointee
        var captured: [JSONKeyPath: JSONValue] = [:]
        for (slot, capturePath) in capturePaths.enumerated() {
            if let value = parseState.captured[slot] { captured[capturePath] = value }
        }
        return Summary(
            collection: parseState.collection, elementCount: parseState.elementCount, captured: captured, byteCount: received)
    }

    // MARK: - Feeding

    /// Large inputs are parsed in pieces so that the elements they complete are handed out (and
    /// their memory reused) as the parse goes.
    static let pieceSize = 256 << 10

    private func ingest(_ bytes: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void) throws {
        var start = 0
        while start < bytes.count {
            let end = Swift.min(start + Self.pieceSize, bytes.count)
            try ingestPiece(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), onElement)
            start = end
        }
    }

    private func ingestPiece(_ piece: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void) throws {
        received += piece.count
        if head.count < 64 { head.append(contentsOf: piece.prefix(64 - head.count)) }
        try route(piece, onElement)
    }

    /// Gives bytes to the fast lane while it reads the items, else to the slow path (scanner and yajl).
    func route(_ bytes: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void) throws {
        if lane != nil {
            let rest = try laneFeed(bytes, onElement)
            // What the lane took is handed out before anything the slow path may throw.
            try deliver(onElement)
            try rest?.withUnsafeBytes { _ = try slowIngest($0, onElement) }
            return
        }
        guard state.pointee.laneAllowed else {
            _ = try slowIngest(bytes, onElement)
            return
        }
        // Until the items array opens, the slow path reads growing slices, so that what the lane will read is
        // not scanned first for nothing.
        var start = 0
        var size = 512
        while start < bytes.count {
            let end = Swift.min(bytes.count, start + size)
            if let handedOver = try slowIngest(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), onElement) {
                // The bytes after the `[` are usually the end of this slice: then the lane reads on from them
                // in `bytes` itself, not from a copy it would have to join to the rest of the chunk.
                let tail = end - handedOver.count
                if tail >= 0, let base = bytes.baseAddress,
                    handedOver.withUnsafeBytes({ memoryEqual($0.baseAddress, base + tail, $0.count) })
                {
                    try route(UnsafeRawBufferPointer(rebasing: bytes[tail...]), onElement)
                    return
                }
                try handedOver.withUnsafeBytes { try route($0, onElement) }
                try route(UnsafeRawBufferPointer(rebasing: bytes[end...]), onElement)
                return
            }
            start = end
            size *= 2
        }
    }

    /// The slow path: the scanner, then yajl. Returns the bytes after the items array's `[` when yajl stopped
    /// there for the lane, which then takes them.
    func slowIngest(_ piece: UnsafeRawBufferPointer, _ onElement: (JSONElement) throws -> Void) throws -> [UInt8]? {
        let scan = scanner.scan(piece)
        let valid = UnsafeRawBufferPointer(rebasing: piece[0..<scan.validCount])
        if !sawContent { sawContent = valid.contains { !Self.isWhitespace($0) } }
        do {
            try accept(valid, newlines: scan.newlines, lastNewline: scan.lastNewline, onElement)
        } catch let handOff as LaneHandOff {
            // What the scanner found past the items' start is found again by whichever path reads it.
            return handOff.rest + piece[scan.validCount...]
        }
        if let (failure, offset) = scan.failure {
            headChecked = true
            try parsePending(onElement)
            throw scannerError(
                failure, at: offset, following: UnsafeRawBufferPointer(rebasing: piece[scan.validCount...]))
        }
        return nil
    }

    private func accept(
        _ bytes: UnsafeRawBufferPointer, newlines: Int, lastNewline: Int?, _ onElement: (JSONElement) throws -> Void
    ) throws {
        if !headChecked {
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            if head.starts(with: bom) {
                throw makeError(.byteOrderMark, "UTF-8 BOM at start", at: 0, unit: nil)
            }
            if head.count < 3 && bom.starts(with: head) {
                appendPending(bytes, newlines: newlines, lastNewline: lastNewline)
                return
            }
            headChecked = true
        }
        // While a long token is being assembled, yajl rescans it from its start on every call:
        // hold input back until it at least doubles what yajl has already buffered. (The scanner refuses a
        // string past the token limit, and `parseUnit` a number, so what is held stays bounded.)
        let target = heldBytes >= 256 ? heldBytes : 0
        if pending.isEmpty && bytes.count >= target {
            try parseUnit(bytes, newlines: newlines, lastNewline: lastNewline, onElement)
        } else {
            appendPending(bytes, newlines: newlines, lastNewline: lastNewline)
            if pending.count >= target { try parsePending(onElement) }
        }
    }

    private func appendPending(_ bytes: UnsafeRawBufferPointer, newlines: Int, lastNewline: Int?) {
        pending.append(bytes)
        pendingNewlines += newlines
        if let lastNewline { pendingLastNewline = lastNewline }
    }

    private func parsePending(_ onElement: (JSONElement) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        let newlines = pendingNewlines
        let lastNewline = pendingLastNewline
        pendingNewlines = 0
        pendingLastNewline = nil
        defer { pending.removeAll() }
        try parseUnit(pending.bytes(0..<pending.count), newlines: newlines, lastNewline: lastNewline, onElement)
    }

    private func parseUnit(
        _ unit: UnsafeRawBufferPointer, newlines: Int, lastNewline: Int?, _ onElement: (JSONElement) throws -> Void
    ) throws {
        let outcome = parser.parse(unit)
        defer { parser.release() }
        if case .stopped(let offset) = outcome, state.pointee.handsOff {
            try enterLane(unit, cut: offset + 1, onElement)
        }
        try deliver(onElement)
        try check(outcome, unit: unit)
        try checkHeldToken(unit)
        parsed += unit.count
        unitStartsInString = scanner.strings.inString
        unitStringStart = scanner.strings.start
        unitStartsEscaped = scanner.awaitsEscapedByte
        parsedNewlines += newlines
        if let lastNewline { parsedLastNewline = lastNewline }
        recent.append(contentsOf: unit.suffix(32))
        if recent.count > 32 { recent.removeFirst(recent.count - 32) }
    }

    func deliver(_ onElement: (JSONElement) throws -> Void) throws {
        guard !state.pointee.completedEnds.isEmpty else { return }
        if let lineSink {
            delivered += state.pointee.takeLines(into: &lineSink.pointee)
            return
        }
        let separator = state.pointee.separatorLength
        let (bytes, ends) = state.pointee.takeCompleted()
        var start = 0
        let isEvents = form == .values
        for end in ends {
            let element = JSONElement(index: delivered, bytes: bytes[start..<end], isEvents: isEvents)
            delivered += 1
            start = end + separator
            try onElement(element)
        }
    }

    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    static func size(_ bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes)-byte"
    }
}
