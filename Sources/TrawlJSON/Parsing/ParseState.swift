/// What the parser callbacks know about the document so far: the open containers, the element
/// being recorded and the side fields being captured. It lives at a fixed address owned by
/// `YajlParser`, which hands that address to yajl as the callback context, so the callbacks reach
/// it without reference counting. Every method returns `false` to stop the parse after setting
/// `failure`.
struct ParseState {
    /// One open array or object (frame 0 stands for the document itself).
    struct Frame {
        /// The matcher state of this container, or -1 when no watched path goes through it.
        var state: Int32
        /// Objects: the matcher state of the value after the current key.
        var childState: Int32
        /// Arrays: elements started; objects: keys seen.
        var count: Int
        /// Offsets of this container's header in the element and capture recordings.
        var elementOffset: Int32
        var captureOffset: Int32
        /// The length of the current key (its first `keySlot` bytes are kept for error paths).
        var keyLength: Int32
        /// Where the current key is in the input being parsed, until `freezeKeys` copies it.
        var keyAddress: UInt
        /// Objects being recorded for decoding: a filter of the keys seen, and whether two of
        /// them fell on the same bit.
        var keyFilter: UInt64
        var mayRepeatKeys: Bool
        var isArray: Bool
        /// The elements of this array are the items.
        var isItems: Bool
        var takesFromEnd: Bool
    }

    enum Failure {
        case tooDeep
        /// A number (or a decoded string) longer than the limit; where it starts in the input being parsed,
        /// when it is there.
        case tokenTooLarge(startInInput: Int?)
        case elementTooLarge
        case captureTooLarge
        case duplicateCollection
    }

    /// A capture through a negative index keeps the last `distance` candidates.
    struct Ring {
        var distance = 0
        var entries: [(ordinal: Int, value: JSONValue?)] = []
    }

    static let keySlot = 32

    let matcher: PathMatcher
    let form: JSONExtractor.Form
    let maxDepth: Int
    let maxTokenBytes: Int
    let maxElementBytes: Int
    let maxCaptureBytes: Int
    /// The value at the item path is one element even when it is an array.
    let wholeValue: Bool

    var frames: UnsafeMutablePointer<Frame>
    var keys: UnsafeMutablePointer<UInt8>
    var frameCapacity: Int
    /// The index of the innermost open container's frame; 0 at the top level.
    var depth = 0

    /// Bit 0: recording an element; bit 1: capturing a side field.
    var recording: UInt8 = 0

    var element = ByteBuffer()
    var needsComma = false
    /// The depth at which the element being recorded lives, or -1.
    var elementDepth = -1
    var elementStart = 0
    /// The ends of the elements completed since the last `takeCompleted`.
    var completedEnds: [Int] = []
    var elementCount = 0

    var capture = ByteBuffer()
    var captureStack: [(slot: Int, depth: Int, start: Int)] = []
    var captureTopDepth = -1
    var captured: [JSONValue?]
    var rings: [Ring]

    var collection = JSONExtractor.Summary.Collection.missing
    var failure: Failure?
    /// yajl was stopped, with no failure, right after the items array opened: its elements go to the fast lane
    /// (`ItemScanner`).
    var handsOff = false
    /// Inside a container that no watched path goes through and nothing records: the parser then
    /// uses lean callbacks that only follow nesting and token sizes (see `YajlParser`).
    var skipping = false
    /// Containers open inside the skipped one.
    var skipDepth = 0
    /// The callback table yajl reads, which the callbacks switch to enter and leave skipping.
    var callbackTable: UnsafeMutableRawPointer?

    /// Whether the items array's elements may go to the fast lane (`ItemScanner`) when it opens.
    var laneAllowed = false

    /// The bytes yajl is parsing right now: strings inside them need no escaping when re-emitted.
    var inputStart = UInt(0)
    var inputEnd = UInt(0)

    init(matcher: PathMatcher, captureDistances: [Int], form: JSONExtractor.Form, limits: JSONLimits, wholeValue: Bool) {
        self.wholeValue = wholeValue
        self.matcher = matcher
        self.form = form
        self.maxDepth = Swift.max(1, limits.maxDepth)
        self.maxTokenBytes = limits.maxTokenBytes
        self.maxElementBytes = limits.maxElementBytes
        self.maxCaptureBytes = limits.maxCaptureBytes
        self.captured = Array(repeating: nil, count: captureDistances.count)
        self.rings = captureDistances.map { Ring(distance: $0) }
        frameCapacity = 16
        frames = .allocate(capacity: frameCapacity)
        keys = .allocate(capacity: frameCapacity * Self.keySlot)
        frames.initialize(to: Frame(
            state: -1, childState: matcher.root, count: 0, elementOffset: 0, captureOffset: 0,
            keyLength: 0, keyAddress: 0, keyFilter: 0, mayRepeatKeys: false, isArray: false, isItems: false,
            takesFromEnd: false))
        // A page's elements are handed out once or twice per page: room for a page of them, not a regrowth
        // from empty in every extractor.
        completedEnds.reserveCapacity(128)
    }

    mutating func release() {
        frames.deallocate()
        keys.deallocate()
        element.release()
        capture.release()
    }

    var captureBytes: Int { capture.count }
    var isInElement: Bool { elementDepth >= 0 }

    // MARK: - Callbacks

    mutating func onNull() -> Bool {
        let state = beginValue()
        if state >= 0, !trackedValueStarts(state, isArray: false) { return false }
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json { writeJSON("null") } else { element.append(EventTag.null.rawValue) }
            }
            if recording & 2 != 0 { capture.append(EventTag.null.rawValue) }
            guard withinSizes() else { return false }
        }
        return valueEnded()
    }

    mutating func onBool(_ value: Bool) -> Bool {
        let state = beginValue()
        if state >= 0, !trackedValueStarts(state, isArray: false) { return false }
        if recording != 0 {
            let tag = value ? EventTag.true.rawValue : EventTag.false.rawValue
            if recording & 1 != 0 {
                if form == .json { writeJSON(value ? "true" : "false") } else { element.append(tag) }
            }
            if recording & 2 != 0 { capture.append(tag) }
            guard withinSizes() else { return false }
        }
        return valueEnded()
    }

    mutating func onNumber(_ text: UnsafeRawPointer, _ length: Int) -> Bool {
        guard length <= maxTokenBytes else { return tokenTooLarge(text) }
        let state = beginValue()
        if state >= 0, !trackedValueStarts(state, isArray: false) { return false }
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json {
                    if needsComma { element.append(UInt8(ascii: ",")) }
                    element.append(text, length)
                    needsComma = true
                } else {
                    Self.writeEvent(.number, text, length, into: &element)
                }
            }
            if recording & 2 != 0 { Self.writeEvent(.number, text, length, into: &capture) }
            guard withinSizes() else { return false }
        }
        return valueEnded()
    }

    mutating func onString(_ text: UnsafeRawPointer, _ length: Int) -> Bool {
        guard length <= maxTokenBytes else { return tokenTooLarge(text) }
        let state = beginValue()
        if state >= 0, !trackedValueStarts(state, isArray: false) { return false }
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json {
                    if needsComma { element.append(UInt8(ascii: ",")) }
                    writeJSONString(text, length)
                    needsComma = true
                } else {
                    Self.writeEvent(.string, text, length, into: &element)
                }
            }
            if recording & 2 != 0 { Self.writeEvent(.string, text, length, into: &capture) }
            guard withinSizes() else { return false }
        }
        return valueEnded()
    }

    mutating func onKey(_ text: UnsafeRawPointer, _ length: Int) -> Bool {
        guard length <= maxTokenBytes else { return tokenTooLarge(text) }
        let top = frames + depth
        top.pointee.count &+= 1
        top.pointee.keyLength = Int32(truncatingIfNeeded: length)
        // Keep where the key is; `freezeKeys` copies it before the input it points into goes away.
        let address = UInt(bitPattern: text)
        if _fastPath(address >= inputStart && address &+ UInt(length) <= inputEnd) {
            top.pointee.keyAddress = address
        } else {
            top.pointee.keyAddress = 0
            copyKey(text, length, level: depth)
        }
        if top.pointee.state >= 0 { top.pointee.childState = matcher.afterKey(top.pointee.state, text, length) }
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json {
                    if needsComma { element.append(UInt8(ascii: ",")) }
                    writeJSONString(text, length)
                    element.append(UInt8(ascii: ":"))
                    needsComma = false
                } else {
                    let bit = Self.keyBit(text, length)
                    if top.pointee.keyFilter & bit != 0 && !top.pointee.mayRepeatKeys {
                        top.pointee.mayRepeatKeys = recordedKey(text, length, in: Int(top.pointee.elementOffset))
                    }
                    top.pointee.keyFilter |= bit
                    element.appendUInt32(UInt32(truncatingIfNeeded: length))
                    element.append(text, length)
                }
            }
            if recording & 2 != 0 {
                capture.appendUInt32(UInt32(truncatingIfNeeded: length))
                capture.append(text, length)
            }
            guard withinSizes() else { return false }
        }
        return true
    }

    mutating func onStartContainer(isArray: Bool) -> Bool {
        let state = beginValue()
        if state >= 0, !trackedValueStarts(state, isArray: isArray) { return false }
        guard depth < maxDepth else { return fail(.tooDeep) }
        if _slowPath(depth + 1 >= frameCapacity) { growFrames() }
        depth &+= 1
        let isItems = isArray && !wholeValue && state >= 0 && matcher.isItems(state)
        let takesFromEnd = isArray && state >= 0 && !matcher.states[Int(state)].fromEnd.isEmpty
        (frames + depth).initialize(to: Frame(
            state: state, childState: -1, count: 0, elementOffset: 0, captureOffset: 0, keyLength: 0,
            keyAddress: 0, keyFilter: 0, mayRepeatKeys: false, isArray: isArray, isItems: isItems,
            takesFromEnd: takesFromEnd))
        if takesFromEnd { resetRings(state) }
        if isItems && laneAllowed && recording == 0 && matcher.elementsAreOpaque(state) {
            // Stops yajl right after the `[`: the extractor hands the following bytes to the fast lane.
            handsOff = true
            return false
        }
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json {
                    if needsComma { element.append(UInt8(ascii: ",")) }
                    element.append(isArray ? UInt8(ascii: "[") : UInt8(ascii: "{"))
                    needsComma = false
                } else {
                    frames[depth].elementOffset = Int32(truncatingIfNeeded: element.count)
                    Self.writeContainerHeader(isArray, into: &element)
                }
            }
            if recording & 2 != 0 {
                frames[depth].captureOffset = Int32(truncatingIfNeeded: capture.count)
                Self.writeContainerHeader(isArray, into: &capture)
            }
            guard withinSizes() else { return false }
        }
        if state < 0 && recording == 0 { skipping = true }
        return true
    }

    // MARK: - Skipped containers

    /// A token inside a skipped container.
    mutating func onSkippedToken(_ text: UnsafeRawPointer?, _ length: Int) -> Bool {
        guard length <= maxTokenBytes else { return tokenTooLarge(text) }
        return true
    }

    /// A container opened inside a skipped container.
    mutating func onSkippedStart() -> Bool {
        guard depth + skipDepth < maxDepth else { return fail(.tooDeep) }
        skipDepth &+= 1
        return true
    }

    /// A container closed inside a skipped container: false when it is the skipped container
    /// itself, which the caller then closes with `onEndContainer` after leaving skipping mode.
    mutating func onSkippedEnd() -> Bool {
        guard skipDepth > 0 else { return false }
        skipDepth &-= 1
        return true
    }

    mutating func onEndContainer() -> Bool {
        let frame = frames[depth]
        if recording != 0 {
            if recording & 1 != 0 {
                if form == .json {
                    element.append(frame.isArray ? UInt8(ascii: "]") : UInt8(ascii: "}"))
                    needsComma = true
                } else {
                    Self.patchContainerHeader(
                        at: Int(frame.elementOffset), count: frame.count, mayRepeatKeys: frame.mayRepeatKeys,
                        in: &element)
                }
            }
            if recording & 2 != 0 {
                Self.patchContainerHeader(at: Int(frame.captureOffset), count: frame.count, in: &capture)
            }
            guard withinSizes() else { return false }
        }
        if frame.takesFromEnd { resolveRings(frame) }
        depth &-= 1
        return valueEnded()
    }

}
