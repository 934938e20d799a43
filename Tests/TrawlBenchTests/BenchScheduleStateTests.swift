import Testing
import TrawlEngine
import TrawlJobs
import TrawlTestSupport

@testable import TrawlBench

/// `BenchScheduleState`, the shared bench schedule of one process as a value: every transition, no store, no
/// sleeps (instants are made from a fixed origin).
@Suite("BenchScheduleState: the shared bench schedule as a value", .hangGuard)
struct BenchScheduleStateTests {
    typealias State = BenchScheduleState
    let t0 = ContinuousClock.Instant.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .boundedSeconds(seconds) }

    @Test("stopped or past the deadline: stop, before anything else")
    func stops() {
        var state = State(rate: 10, processes: 1)
        state.pause("h", until: at(5))
        #expect(state.next(host: "h", now: t0, deadline: nil, stopped: true, storeUsable: true) == .stop)
        #expect(state.next(host: "h", now: at(2), deadline: at(2), stopped: false, storeUsable: true) == .stop)
        #expect(state.next(host: "h", now: at(1), deadline: at(2), stopped: false, storeUsable: true)
            == .wait(until: at(5), paused: true))
    }

    @Test("a paused host waits for the pause's end; the latest end wins; other hosts go on")
    func hostPauses() {
        var state = State(rate: 10, processes: 1)
        state.pause("h", until: at(3))
        state.pause("h", until: at(2))
        #expect(state.isPaused("h", at: at(2.5)) && !state.isPaused("h", at: at(3)) && !state.isPaused("x", at: t0))
        #expect(state.next(host: "h", now: t0, deadline: nil, stopped: false, storeUsable: true)
            == .wait(until: at(3), paused: true))
        #expect(state.next(host: "x", now: t0, deadline: nil, stopped: false, storeUsable: true)
            == .askStore(lag: SharedBenchSchedule.lag))
        #expect(state.next(host: "h", now: at(3), deadline: nil, stopped: false, storeUsable: true)
            == .askStore(lag: SharedBenchSchedule.lag))
    }

    @Test("the store's slot is sent at its offset, dropped slots counted; a wait or pause is waited")
    func storeDecisions() {
        var state = State(rate: 10, processes: 1)
        #expect(
            state.answered(.slot(0.02, dropped: 3), asked: t0, now: at(1)) == .send(at(1) + .boundedSeconds(0.02)))
        #expect(state.statistics.dropped == 3)
        #expect(
            state.answered(.wait(0.5, paused: false), asked: t0, now: at(1)) == .wait(until: at(1.5), paused: false))
        #expect(state.answered(.wait(2, paused: true), asked: t0, now: at(1)) == .wait(until: at(3), paused: true))
    }

    @Test("no answer: the local share, R/N from the request's time, never past the horizon, then the store again")
    func localShare() {
        var state = State(rate: 10, processes: 2)
        // No answer at t0: the first local slot is now; the next is N/R = 0.2 s later.
        #expect(state.answered(nil, asked: t0, now: at(0.01)) == .send(t0))
        #expect(state.local == at(0.2) && state.localSince == t0)
        // Asked again while on the local share: the store is asked with no backlog (lag 0).
        #expect(state.next(host: "h", now: at(0.05), deadline: nil, stopped: false, storeUsable: true)
            == .askStore(lag: 0))
        // The store in its back-off: the local share; 0.2 s is past the horizon from 0.05 s, so wait.
        #expect(state.next(host: "h", now: at(0.05), deadline: nil, stopped: false, storeUsable: false)
            == .wait(until: at(0.2) - .boundedSeconds(SharedBenchSchedule.horizon), paused: false))
        #expect(state.next(host: "h", now: at(0.16), deadline: nil, stopped: false, storeUsable: false)
            == .send(at(0.2)))
        // More processes seen live than --processes: the share follows them.
        state.beat(live: 4)
        #expect(state.next(host: "h", now: at(0.4), deadline: nil, stopped: false, storeUsable: false)
            == .send(at(0.4)))
        #expect(state.local == at(0.8))
        // A share still in force counts until now; the store's answer ends it and counts its time.
        #expect(abs(state.statistics(now: at(0.5)).localShareSeconds - 0.5) < 1e-9)
        #expect(state.answered(.slot(0, dropped: 0), asked: at(1), now: at(1)) == .send(at(1)))
        #expect(state.local == nil && state.localSince == nil)
        #expect(abs(state.statistics.localShareSeconds - 1) < 1e-9)
        state.endLocalShare(now: at(9))
        #expect(abs(state.statistics.localShareSeconds - 1) < 1e-9, "ended once")
    }

    @Test("back with the store after a local share: its slots at the local pace for one back-off, then as given")
    func rejoinKeepsTheLocalPace() {
        var state = State(rate: 10, processes: 2, rejoinGrace: 1)
        #expect(state.answered(nil, asked: t0, now: t0) == .send(t0))  // local share: next at 0.2 s
        // Back at 0.1 s. Another process may still be on its share for a second: R/N = 5/s from the local pace.
        #expect(state.answered(.slot(0, dropped: 0), asked: at(0.1), now: at(0.1)) == .send(at(0.2)))
        #expect(state.answered(.slot(0, dropped: 0), asked: at(0.1), now: at(0.1)) == .send(at(0.4)))
        // A slot later than the pace is taken as given and moves the pace on.
        #expect(state.answered(.slot(0.5, dropped: 0), asked: at(0.3), now: at(0.3)) == .send(at(0.8)))
        #expect(state.answered(.slot(0, dropped: 0), asked: at(0.9), now: at(0.9)) == .send(at(1.0)))
        // One back-off after the return: the store's slots as given.
        #expect(state.answered(.slot(0, dropped: 0), asked: at(1.1), now: at(1.1)) == .send(at(1.1)))
        #expect(state.rejoin == nil)
        #expect(state.answered(.slot(0, dropped: 0), asked: at(1.1), now: at(1.1)) == .send(at(1.1)))
        // Never on a local share: nothing to keep to.
        var fresh = State(rate: 10, processes: 2, rejoinGrace: 1)
        #expect(fresh.answered(.slot(0, dropped: 0), asked: t0, now: t0) == .send(t0))
        #expect(fresh.answered(.slot(0, dropped: 0), asked: t0, now: t0) == .send(t0))
    }

    @Test("pauses waited through count once when they overlap; their seconds add up")
    func pauseCounting() {
        var state = State(rate: 10, processes: 1)
        state.waitStarted(at: t0, until: at(2), paused: true)
        state.waitStarted(at: at(1), until: at(3), paused: true)
        #expect(state.statistics.pauses == 1)
        state.waitStarted(at: at(3), until: at(4), paused: true)
        #expect(state.statistics.pauses == 2)
        state.waitStarted(at: at(5), until: at(6), paused: false)
        #expect(state.statistics.pauses == 2, "a wait for a slot is no pause")
        state.pauseWaited(1.5)
        state.pauseWaited(0.5)
        #expect(state.statistics.pausedSeconds == 2)
    }

    @Test("heartbeats: processes live now and the most seen")
    func heartbeats() {
        var state = State(rate: 10, processes: 1)
        state.beat(live: 3)
        state.beat(live: 2)
        #expect(state.statistics.processes == 2 && state.statistics.mostProcesses == 3)
    }

    @Test("the store's answer is bounded: a slot at most the horizon ahead, waits at most the longest pause")
    func decisions() {
        func answer(_ kind: String, _ seconds: String, _ dropped: String = "0") -> RESPValue {
            .array([.bulk(Array(kind.utf8)), .bulk(Array(seconds.utf8)), .bulk(Array(dropped.utf8))])
        }
        #expect(State.decision(answer("slot", "9", "2")) == .slot(SharedBenchSchedule.horizon, dropped: 2))
        #expect(State.decision(answer("slot", "0.01", "-5")) == .slot(0.01, dropped: 0))
        #expect(State.decision(answer("wait", "0")) == .wait(0.001, paused: false))
        #expect(State.decision(answer("pause", "1e9")) == .wait(SharedBenchSchedule.longestPause, paused: true))
        #expect(State.decision(answer("slot", "nan")) == nil)
        #expect(State.decision(answer("other", "1")) == nil)
        #expect(State.decision(.integer(1)) == nil && State.decision(nil) == nil)
    }
}
