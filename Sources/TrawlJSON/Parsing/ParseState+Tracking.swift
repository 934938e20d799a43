/// How `ParseState` follows positions, elements and captures, and manages its memory.
extension ParseState {
    // MARK: - Positions

    /// Advances the enclosing container to a new value and returns the value's matcher state.
    @inline(__always)
    mutating func beginValue() -> Int32 {
        let top = frames + depth
        if top.pointee.isArray {
            let index = top.pointee.count
            top.pointee.count = index &+ 1
            if _fastPath(top.pointee.state < 0) { return -1 }
            return arrayElementBegins(top, index)
        }
        return top.pointee.childState
    }

    mutating func arrayElementBegins(_ top: UnsafeMutablePointer<Frame>, _ index: Int) -> Int32 {
        let parent = top.pointee.state
        if top.pointee.takesFromEnd {
            for entry in matcher.states[Int(parent)].fromEnd {
                rings[entry.slot].entries.append((index, nil))
                if rings[entry.slot].entries.count > entry.distance { rings[entry.slot].entries.removeFirst() }
            }
        }
        if top.pointee.isItems { startElement() }
        return matcher.afterIndex(parent, index)
    }

    /// False when the value at the items path starts a second time: a key on the path is duplicated
    /// (`{"items":[…],"items":[…]}`), and streaming both arrays would mix two collections into one.
    mutating func trackedValueStarts(_ state: Int32, isArray: Bool) -> Bool {
        let info = matcher.states[Int(state)]
        if info.isItems {
            guard collection == .missing else { return fail(.duplicateCollection) }
            if isArray && !wholeValue {
                if collection == .missing { collection = .array }
            } else {
                if collection == .missing { collection = .value }
                if elementDepth < 0 { startElement() }
            }
        }
        for slot in info.captures {
            captureStack.append((slot, depth + 1, capture.count))
            captureTopDepth = depth + 1
            recording |= 2
        }
        return true
    }

    /// Completes the element and the captures whose value just ended.
    @inline(__always)
    mutating func valueEnded() -> Bool {
        if elementDepth == depth &+ 1 { finishElement() }
        if captureTopDepth == depth &+ 1 { return finishCaptures() }
        return true
    }

    mutating func startElement() {
        elementDepth = depth + 1
        elementStart = element.count
        needsComma = false
        if form != .countOnly { recording |= 1 }
    }

    mutating func finishElement() {
        if form != .countOnly {
            completedEnds.append(element.count)
            // Compact JSON elements are recorded as lines, so that they can be handed out in one copy.
            if form == .json { element.append(UInt8(ascii: "\n")) }
        }
        elementCount += 1
        elementDepth = -1
        recording &= ~1
    }

    mutating func finishCaptures() -> Bool {
        while let top = captureStack.last, top.depth == depth + 1 {
            captureStack.removeLast()
            guard capture.count - top.start <= maxCaptureBytes else { return fail(.captureTooLarge) }
            let value = JSONValue(events: capture.bytes(top.start..<capture.count))
            if rings[top.slot].distance > 0 {
                let last = rings[top.slot].entries.count - 1
                if last >= 0 { rings[top.slot].entries[last].value = value }
            } else {
                captured[top.slot] = value
            }
        }
        if let top = captureStack.last {
            captureTopDepth = top.depth
        } else {
            captureTopDepth = -1
            capture.removeAll()
            recording &= ~2
        }
        return true
    }

    mutating func resetRings(_ state: Int32) {
        for entry in matcher.states[Int(state)].fromEnd { rings[entry.slot].entries.removeAll() }
    }

    mutating func resolveRings(_ frame: Frame) {
        for entry in matcher.states[Int(frame.state)].fromEnd {
            let wanted = frame.count - entry.distance
            captured[entry.slot] = rings[entry.slot].entries.first { $0.ordinal == wanted }?.value ?? nil
            rings[entry.slot].entries.removeAll()
        }
    }

    mutating func copyKey(_ text: UnsafeRawPointer, _ length: Int, level: Int) {
        (keys + level &* Self.keySlot).update(
            from: text.assumingMemoryBound(to: UInt8.self), count: Swift.min(length, Self.keySlot))
    }

    /// Copies the keys still pointing into the input, which is about to be released.
    mutating func freezeKeys() {
        var level = 1
        while level <= depth {
            let address = frames[level].keyAddress
            if address != 0, let text = UnsafeRawPointer(bitPattern: address) {
                copyKey(text, Int(frames[level].keyLength), level: level)
                frames[level].keyAddress = 0
            }
            level += 1
        }
    }

    /// Shifts the recorded offsets of the open element after its bytes moved `shift` bytes down.
    mutating func rebaseElement(by shift: Int) {
        elementStart -= shift
        guard form == .values, elementDepth >= 0 else { return }
        var level = elementDepth
        while level <= depth {
            frames[level].elementOffset -= Int32(truncatingIfNeeded: shift)
            level += 1
        }
    }

    /// Every limit is checked at the token that crosses it, so an extraction fails at the same byte of the
    /// document, having handed out the same elements, however the document was chunked.
    @inline(__always)
    mutating func withinSizes() -> Bool {
        if elementDepth >= 0 && element.count &- elementStart > maxElementBytes { return fail(.elementTooLarge) }
        if capture.count > maxCaptureBytes { return fail(.captureTooLarge) }
        return true
    }

    mutating func tokenTooLarge(_ text: UnsafeRawPointer?) -> Bool {
        let address = UInt(bitPattern: text)
        let inInput = address >= inputStart && address < inputEnd
        return fail(.tokenTooLarge(startInInput: inInput ? Int(address - inputStart) : nil))
    }

    mutating func fail(_ failure: Failure) -> Bool {
        self.failure = failure
        return false
    }

    mutating func growFrames() {
        let newCapacity = frameCapacity * 2
        let newFrames = UnsafeMutablePointer<Frame>.allocate(capacity: newCapacity)
        newFrames.moveInitialize(from: frames, count: depth + 1)
        frames.deallocate()
        frames = newFrames
        let newKeys = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity * Self.keySlot)
        newKeys.initialize(from: keys, count: frameCapacity * Self.keySlot)
        keys.deallocate()
        keys = newKeys
        frameCapacity = newCapacity
    }
}
