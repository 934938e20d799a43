// The only file that touches yajl: the callback table, the handle, and the mapping of yajl's
// outcomes to `ParseOutcome`.
private import CYajl

/// How one call into yajl ended.
enum ParseOutcome {
    case ok
    /// yajl rejected the input: its message (e.g. `"trailing garbage"`) and an offset in the
    /// buffer: of the byte it objects to, or (`afterToken`) just after the token it objects to.
    /// `steppedBack`: yajl moved the offset back by the token's length without its quotes, and to the buffer's
    /// start when that reached past it (`tokenSteppedBack(to:unit:)` finds the token).
    case syntax(message: String, offset: Int, afterToken: Bool, steppedBack: Bool)
    /// A callback stopped the parse; `ParseState.failure` says why. The offset is that of the last
    /// byte of the token the callback was given (-1: the last byte of the previous buffer).
    case stopped(offset: Int)
}

/// One yajl parser and the state its callbacks update. yajl 2.1 cannot be reset, so each
/// document gets its own.
final class YajlParser {
    private var handle: yajl_handle
    /// Stable address handed to yajl as the callback context.
    let state: UnsafeMutablePointer<ParseState>

    /// This parser's callback table: the full one, or the lean one while a container is skipped.
    private let table: UnsafeMutablePointer<yajl_callbacks>

    init(state initial: ParseState) {
        state = .allocate(capacity: 1)
        state.initialize(to: initial)
        table = .allocate(capacity: 1)
        table.initialize(to: fullCallbacks)
        state.pointee.callbackTable = UnsafeMutableRawPointer(table)
        handle = Self.makeHandle(table, state)
    }

    private static func makeHandle(
        _ table: UnsafeMutablePointer<yajl_callbacks>, _ state: UnsafeMutablePointer<ParseState>
    ) -> yajl_handle {
        guard let handle = yajl_alloc(table, nil, UnsafeMutableRawPointer(state)) else {
            fatalError("yajl_alloc failed: out of memory")
        }
        // Our own scanner validates UTF-8 more strictly than yajl, so yajl need not.
        _ = trawl_yajl_config_bool(handle, yajl_dont_validate_strings, 1)
        return handle
    }

    /// Replaces the handle (which stopped at a hand-off to the fast lane) with a new one brought to the same
    /// place in the document by `prefix`, a stand-in for the open containers that no callback sees.
    func restart(prefix: [UInt8]) {
        yajl_free(handle)
        handle = Self.makeHandle(table, state)
        table.pointee = ghostCallbacks
        let status = prefix.withUnsafeBufferPointer { yajl_parse(handle, $0.baseAddress, $0.count) }
        table.pointee = fullCallbacks
        precondition(status == yajl_status_ok, "the stand-in for the open containers did not parse")
    }

    deinit {
        yajl_free(handle)
        table.deallocate()
        state.pointee.release()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Parses the next bytes of the document.
    func parse(_ bytes: UnsafeRawBufferPointer) -> ParseOutcome {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .ok }
        state.pointee.inputStart = UInt(bitPattern: base)
        state.pointee.inputEnd = UInt(bitPattern: base + bytes.count)
        let status = yajl_parse(handle, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        return outcome(status)
    }

    /// Called once the bytes given to `parse` are no longer needed (after any error was read).
    func release() {
        state.pointee.freezeKeys()
        state.pointee.inputStart = 0
        state.pointee.inputEnd = 0
    }

    /// Tells yajl the document ended, which completes a trailing number or reports a truncation.
    func complete() -> ParseOutcome {
        outcome(yajl_complete_parse(handle))
    }

    private func outcome(_ status: yajl_status) -> ParseOutcome {
        let consumed = Int(yajl_get_bytes_consumed(handle))
        switch status {
        case yajl_status_ok:
            return .ok
        case yajl_status_client_canceled:
            // -1 when the token ended in an earlier buffer (a number completed by the byte after it).
            return .stopped(offset: consumed - 1)
        default:
            var message = "invalid JSON"
            if let text = yajl_get_error(handle, 0, nil, 0) {
                message = String(cString: text)
                yajl_free_error(handle, text)
            }
            // Lexical errors leave the offset at the offending byte; parse errors just after the
            // offending token, except one that already steps back to its start.
            let afterToken = message.hasPrefix("parse error") && !message.contains("after key and value")
            return .syntax(
                message: Self.plainMessage(message), offset: consumed, afterToken: afterToken,
                steppedBack: !afterToken && message.hasPrefix("parse error"))
        }
    }

    /// `"parse error: trailing garbage\n"` → `"trailing garbage"`.
    private static func plainMessage(_ raw: String) -> String {
        var text = Substring(raw)
        for prefix in ["parse error: ", "lexical error: "] where text.hasPrefix(prefix) {
            text = text.dropFirst(prefix.count)
        }
        while let last = text.last, last == "\n" || last == "." { text = text.dropLast() }
        return String(text)
    }
}

// MARK: - Callbacks

// yajl keeps the pointer to its callback table and reads it at every token, so each parser owns
// a table that outlives its handle; the callbacks switch it between these two sets. The functions
// are plain globals (isolated to no actor) and reach the state without reference counting.
private let fullCallbacks = yajl_callbacks(
    yajl_null: onNull, yajl_boolean: onBoolean, yajl_integer: nil, yajl_double: nil,
    yajl_number: onNumber, yajl_string: onString, yajl_start_map: onStartMap, yajl_map_key: onMapKey,
    yajl_end_map: onEnd, yajl_start_array: onStartArray, yajl_end_array: onEnd)

/// While `restart` brings a new handle to where the old one was: nothing happens.
private let ghostCallbacks = yajl_callbacks(
    yajl_null: { _ in 1 }, yajl_boolean: { _, _ in 1 }, yajl_integer: nil, yajl_double: nil,
    yajl_number: { _, _, _ in 1 }, yajl_string: { _, _, _ in 1 }, yajl_start_map: { _ in 1 },
    yajl_map_key: { _, _, _ in 1 }, yajl_end_map: { _ in 1 }, yajl_start_array: { _ in 1 },
    yajl_end_array: { _ in 1 })

/// Inside a skipped container: callbacks that only count tokens (so that a long run of them is not
/// taken for one long token) and check sizes.
private let leanCallbacks = yajl_callbacks(
    yajl_null: onSkippedNull, yajl_boolean: onSkippedBoolean, yajl_integer: nil, yajl_double: nil,
    yajl_number: onSkippedNumber, yajl_string: onSkippedString, yajl_start_map: onSkippedStart,
    yajl_map_key: onSkippedString, yajl_end_map: onSkippedEnd, yajl_start_array: onSkippedStart,
    yajl_end_array: onSkippedEnd)

@inline(__always)
private func useTable(_ state: UnsafeMutablePointer<ParseState>, _ callbacks: yajl_callbacks) {
    state.pointee.callbackTable.unsafelyUnwrapped.assumingMemoryBound(to: yajl_callbacks.self).pointee = callbacks
}

@inline(__always)
private func parseState(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ParseState> {
    context.unsafelyUnwrapped.assumingMemoryBound(to: ParseState.self)
}

private func onNull(_ context: UnsafeMutableRawPointer?) -> Int32 {
    parseState(context).pointee.onNull() ? 1 : 0
}

private func onBoolean(_ context: UnsafeMutableRawPointer?, _ value: Int32) -> Int32 {
    parseState(context).pointee.onBool(value != 0) ? 1 : 0
}

private func onNumber(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
    parseState(context).pointee.onNumber(UnsafeRawPointer(text.unsafelyUnwrapped), length) ? 1 : 0
}

private func onString(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<UInt8>?, _ length: Int) -> Int32 {
    parseState(context).pointee.onString(UnsafeRawPointer(text ?? emptyText), length) ? 1 : 0
}

private func onMapKey(_ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<UInt8>?, _ length: Int) -> Int32 {
    parseState(context).pointee.onKey(UnsafeRawPointer(text ?? emptyText), length) ? 1 : 0
}

private func onStartMap(_ context: UnsafeMutableRawPointer?) -> Int32 {
    onStart(parseState(context), isArray: false)
}

private func onStartArray(_ context: UnsafeMutableRawPointer?) -> Int32 {
    onStart(parseState(context), isArray: true)
}

@inline(__always)
private func onStart(_ state: UnsafeMutablePointer<ParseState>, isArray: Bool) -> Int32 {
    guard state.pointee.onStartContainer(isArray: isArray) else { return 0 }
    if state.pointee.skipping { useTable(state, leanCallbacks) }
    return 1
}

private func onSkippedNumber(
    _ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?, _ length: Int
) -> Int32 {
    parseState(context).pointee.onSkippedToken(UnsafeRawPointer(text), length) ? 1 : 0
}

private func onSkippedString(
    _ context: UnsafeMutableRawPointer?, _ text: UnsafePointer<UInt8>?, _ length: Int
) -> Int32 {
    parseState(context).pointee.onSkippedToken(UnsafeRawPointer(text), length) ? 1 : 0
}

private func onSkippedNull(_ context: UnsafeMutableRawPointer?) -> Int32 {
    parseState(context).pointee.onSkippedToken(nil, 0) ? 1 : 0
}

private func onSkippedBoolean(_ context: UnsafeMutableRawPointer?, _ value: Int32) -> Int32 {
    parseState(context).pointee.onSkippedToken(nil, 0) ? 1 : 0
}

private func onSkippedStart(_ context: UnsafeMutableRawPointer?) -> Int32 {
    parseState(context).pointee.onSkippedStart() ? 1 : 0
}

private func onSkippedEnd(_ context: UnsafeMutableRawPointer?) -> Int32 {
    let state = parseState(context)
    if state.pointee.onSkippedEnd() { return 1 }
    state.pointee.skipping = false
    useTable(state, fullCallbacks)
    return state.pointee.onEndContainer() ? 1 : 0
}

private func onEnd(_ context: UnsafeMutableRawPointer?) -> Int32 {
    parseState(context).pointee.onEndContainer() ? 1 : 0
}

/// yajl passes a null pointer for an empty string decoded from escapes.
nonisolated(unsafe) private let emptyText = UnsafePointer(UnsafeMutablePointer<UInt8>.allocate(capacity: 1))

extension YajlParser {
    /// yajl's version as loaded at run time, `MAJOR.MINOR.MICRO` (yajl_version() gives MAJOR*10000+MINOR*100+MICRO).
    static var libraryVersion: String {
        let number = Int(yajl_version())
        return "\(number / 10000).\(number / 100 % 100).\(number % 100)"
    }
}
