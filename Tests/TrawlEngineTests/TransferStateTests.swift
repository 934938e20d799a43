import Testing
import TrawlTestSupport

@testable import TrawlEngine

/// `TransferState`, one transfer's life as a value: every transition, no sockets.
@Suite("TransferState: a transfer's head, waiter, pauses and cancel as a value", .hangGuard)
struct TransferStateTests {
    @Test("buffered: header lines until the blank line, then the body; the end resumes the waiter once")
    func bufferedResponse() {
        var state = TransferState(streaming: false)
        #expect(state.readsHeaderLines && !state.headComplete && !state.dropsBody)
        state.statusLine()
        #expect(state.headEnded(status: 200, followedRedirect: false) == .body)
        #expect(!state.readsHeaderLines, "lines after the head are trailers")
        #expect(state.headComplete && !state.dropsBody && !state.isRedirect && !state.resumed)
        #expect(state.ended(failed: false) == .succeed)
        #expect(state.resumed && state.ended)
        #expect(state.ended(failed: true) == .none, "only the first end counts")
    }

    @Test("a 1xx head is interim: the next head is read, and it decides")
    func interimHead() {
        var state = TransferState(streaming: true)
        state.statusLine()
        #expect(state.headEnded(status: 100, followedRedirect: false) == .interim)
        #expect(state.readsHeaderLines && !state.headComplete && !state.resumed)
        state.statusLine()
        #expect(state.headEnded(status: 204, followedRedirect: false) == .deliverHead)
        #expect(state.headComplete && state.resumed)
    }

    @Test("a redirect Trawl follows: its body is dropped, and the end resumes the waiter even when streaming")
    func followedRedirect() {
        var state = TransferState(streaming: true)
        state.statusLine()
        #expect(state.headEnded(status: 302, followedRedirect: true) == .redirect)
        #expect(state.dropsBody && state.isRedirect && state.headComplete && !state.resumed)
        #expect(state.ended(failed: false) == .succeed)
        var failed = TransferState(streaming: false)
        failed.statusLine()
        _ = failed.headEnded(status: 307, followedRedirect: true)
        #expect(failed.ended(failed: true) == .fail)
    }

    @Test("streaming: the head is handed over once; at the end only the stream learns it, failed or not")
    func streamedResponse() {
        var state = TransferState(streaming: true)
        state.statusLine()
        #expect(state.headEnded(status: 200, followedRedirect: false) == .deliverHead)
        #expect(state.resumed && !state.dropsBody)
        // A second head after the first was handed over (a server repeating itself) is not handed over again.
        state.statusLine()
        #expect(state.readsHeaderLines)
        #expect(state.headEnded(status: 200, followedRedirect: false) == .body)
        var failing = state
        #expect(state.ended(failed: false) == .finishStream)
        #expect(failing.ended(failed: true) == .finishStream)
        #expect(failing.ended(failed: false) == .none)
    }

    @Test("an end before any head (a failure, a cancel before start) resumes the waiter with the failure")
    func endBeforeHead() {
        var state = TransferState(streaming: true)
        #expect(state.ended(failed: true) == .fail)
        #expect(!state.headComplete, "a connection closed inside the head is a truncation")
        var closed = TransferState(streaming: false)
        closed.statusLine()
        #expect(!closed.headComplete && closed.readsHeaderLines)
        #expect(closed.ended(failed: true) == .fail)
    }

    @Test("pauses: each direction resumes once, saying which stays paused")
    func pauses() {
        var state = TransferState(streaming: true)
        #expect(!state.isPaused)
        #expect(state.resumeReceive() == nil && state.resumeSend() == nil, "nothing was paused")
        state.pauseReceive()
        #expect(state.isPaused && state.receivePaused)
        #expect(state.resumeReceive() == .neither)
        #expect(state.resumeReceive() == nil)
        state.pauseReceive()
        state.pauseSend()
        #expect(state.resumeSend() == .receive)
        #expect(state.isPaused)
        state.pauseSend()
        #expect(state.resumeReceive() == .send)
        #expect(state.resumeSend() == .neither)
        #expect(!state.isPaused)
    }

    @Test("a cancel before the start is remembered; it changes nothing else")
    func cancelBeforeStart() {
        var state = TransferState(streaming: false)
        #expect(!state.cancelRequested)
        state.requestCancel()
        #expect(state.cancelRequested && !state.resumed && !state.ended)
        #expect(state.ended(failed: true) == .fail)
    }

    @Test("the state is small and inline: no allocation per transfer")
    func layout() {
        #expect(MemoryLayout<TransferState>.size <= 8)
    }
}
