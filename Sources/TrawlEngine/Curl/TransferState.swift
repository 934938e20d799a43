/// One transfer's life as a value: where its head is (arriving, or ended as a redirect Trawl follows or as the
/// final response), whether its waiter was resumed, which directions libcurl has paused, and whether a cancel
/// came before it started. libcurl's callbacks and the loop's commands are events; each returns what `Transfer`
/// and `CurlLoop` do (resume the waiter, hand the head over, unpause a direction), so the facts change here only.
///
/// ```swift
/// var state = TransferState(streaming: true)
/// state.statusLine()                                        // a head begins
/// state.headEnded(status: 200, followedRedirect: false)     // .deliverHead: resume with the head now
/// state.ended(failed: false)                                // .finishStream: the waiter has the head already
/// ```
struct TransferState: Equatable {
    enum Head: Equatable {
        /// Status and header lines arriving (the first head, or the next after a 1xx).
        case receiving
        /// The head of a redirect Trawl follows ended: its body is dropped.
        case redirect
        /// The final head ended: its body is the response's.
        case final
    }

    /// After a head's blank line.
    enum HeadAction: Equatable {
        /// A 1xx: the next head follows.
        case interim
        /// A redirect to follow: nothing to set up for its body.
        case redirect
        /// The body follows: a buffered one's buffer is sized; a stream's waiter had a head already.
        case body
        /// Streaming: resume the waiter with the head now; the body flows through the stream.
        case deliverHead
    }

    /// At the transfer's end.
    enum EndAction: Equatable {
        /// Resume the waiter with the failure (and fail the stream, if any).
        case fail
        /// Resume the waiter with the outcome (and end the stream, if any).
        case succeed
        /// The waiter had the head already: only the stream learns the end (failed or not).
        case finishStream
        /// It had ended already.
        case none
    }

    /// Which directions stay paused once one is resumed: the mask `curl_easy_pause` is given.
    enum StillPaused: Equatable {
        case neither, receive, send
    }

    let streaming: Bool
    private(set) var head = Head.receiving
    /// The waiter was resumed (with a streamed head, or at the end).
    private(set) var resumed = false
    private(set) var ended = false
    private(set) var receivePaused = false
    private(set) var sendPaused = false
    /// A cancel that came before the loop started the transfer: the start ends it instead.
    private(set) var cancelRequested = false

    init(streaming: Bool) { self.streaming = streaming }

    /// Whether header lines belong to the head (after it ended they are trailers).
    var readsHeaderLines: Bool { head == .receiving }
    /// Whether the final head (or a followed redirect's) ended: before it, a closed connection is a truncation.
    var headComplete: Bool { head != .receiving }
    /// Body bytes of a redirect are dropped.
    var dropsBody: Bool { head == .redirect }
    var isRedirect: Bool { head == .redirect }
    var isPaused: Bool { receivePaused || sendPaused }

    /// A status line: a new head begins (the first, or the one after a 1xx).
    mutating func statusLine() {
        head = .receiving
    }

    /// The head's blank line. `followedRedirect`: a status Trawl follows, with a `Location`, while it follows.
    mutating func headEnded(status: Int, followedRedirect: Bool) -> HeadAction {
        guard status >= 200 else { return .interim }
        if followedRedirect {
            head = .redirect
            return .redirect
        }
        head = .final
        guard streaming, !resumed else { return .body }
        resumed = true
        return .deliverHead
    }

    /// libcurl paused receiving (the stream is full) or sending (the upload has nothing yet).
    mutating func pauseReceive() { receivePaused = true }
    mutating func pauseSend() { sendPaused = true }

    /// The consumer made room: `nil` when receiving was not paused, else what stays paused.
    mutating func resumeReceive() -> StillPaused? {
        guard receivePaused else { return nil }
        receivePaused = false
        return sendPaused ? .send : .neither
    }

    /// The upload has bytes again: `nil` when sending was not paused, else what stays paused.
    mutating func resumeSend() -> StillPaused? {
        guard sendPaused else { return nil }
        sendPaused = false
        return receivePaused ? .receive : .neither
    }

    /// A cancel for a transfer the loop has not started (or has ended: then it changes nothing).
    mutating func requestCancel() { cancelRequested = true }

    /// The transfer ended (`failed`: with an error or a cancellation). Only the first end counts.
    mutating func ended(failed: Bool) -> EndAction {
        guard !ended else { return .none }
        ended = true
        guard !resumed else { return .finishStream }
        resumed = true
        return failed ? .fail : .succeed
    }
}
