import Foundation
import Synchronization
internal import CCurl

/// libcurl's global state is initialised once per process (curl_global_init is not thread-safe).
/// OpenSSL is first told to leave its state alone at exit (see `trawl_tls_keep_state_at_exit`): a loop thread
/// closing its connections must never race the exit handlers freeing the same state.
let curlGlobalInit: Void = {
    _ = trawl_tls_keep_state_at_exit()
    _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    trawl_ignore_sigpipe()  // CURLOPT_NOSIGNAL is set on every handle; a dead peer must not kill us.
}()

/// Owns one libcurl multi handle and the thread that drives it (perform + poll). Other threads talk
/// to it only through `submit`, `cancel` and `resume*`, which queue a command and wake the thread.
final class CurlLoop: @unchecked Sendable {
    private enum Command {
        case start(Transfer)
        case cancel(Transfer)
        case resumeReceive(Transfer)
        case resumeSend(Transfer)
        /// A task job for `EngineExecutor`: runs on this thread between libcurl calls.
        case run(UnownedJob)
    }

    private struct Inbox {
        var commands: [Command] = []
        var polling = false
        var wakePending = false
        var shutdown = false
    }

    private let inbox = Mutex(Inbox())
    /// Transfers queued or running, and easy handles ever created: observable from tests.
    let transfersInProgress = Atomic<Int>(0)
    let handlesCreated = Atomic<Int>(0)
    /// The loop thread's `pthread_self()`, once it runs (0 before).
    private let threadID = Atomic<UInt>(0)
    private let multi: UnsafeMutableRawPointer
    private let configuration: Client.Configuration
    /// The client's default header lines as one curl list, built once and shared by every transfer
    /// that sends exactly those (saves two mallocs and frees per line per request).
    private let defaultHeaderList: UnsafeMutablePointer<curl_slist>?

    // Loop-thread state.
    /// Running transfers; each knows its index (`Transfer.liveIndex`), so removal is a swap with the last.
    private var live: [Transfer] = []
    private var waiting: WaitingQueue
    private var perOrigin: [Origin: Int] = [:]
    private var pool: [EasyHandle] = []
    private let clock = ContinuousClock()
    private var nextStallCheck = ContinuousClock.now
    private static let stallCheckInterval = Duration.milliseconds(250)

    init(configuration: Client.Configuration, defaultHeaderLines: [String]) {
        _ = curlGlobalInit
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed (out of memory)") }
        self.multi = multi
        self.configuration = configuration
        var list: UnsafeMutablePointer<curl_slist>?
        for line in defaultHeaderLines {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                list = nil
                break  // out of memory: transfers build their own lists instead
            }
            list = appended
        }
        defaultHeaderList = list
        waiting = WaitingQueue(perOrigin: configuration.maxConnectionsPerHost != nil)
        // Keep a kept-alive connection for every transfer slot.
        _ = trawl_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(configuration.maxConcurrentTransfers, 8))
        _ = trawl_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let thread = Thread { [self] in self.run() }
        thread.name = "trawl-curl-loop"
        thread.start()
    }

    // MARK: - any thread

    /// Whether the caller runs on this loop's thread.
    var isCurrentThread: Bool { threadID.load(ordering: .relaxed) == UInt(pthread_self()) }

    func submit(_ transfer: Transfer) {
        transfersInProgress.add(1, ordering: .relaxed)
        enqueue(.start(transfer))
    }
    func cancel(_ transfer: Transfer) { enqueue(.cancel(transfer)) }
    func resumeReceive(_ transfer: Transfer) { enqueue(.resumeReceive(transfer)) }
    func resumeSend(_ transfer: Transfer) { enqueue(.resumeSend(transfer)) }
    func run(_ job: UnownedJob) { enqueue(.run(job)) }
    /// Set once, right after init, by the executor that runs jobs here.
    nonisolated(unsafe) var executor: UnownedTaskExecutor?

    /// The thread exits once every transfer has ended.
    func shutdown() {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.shutdown = true
            return inbox.polling
        }
        if wake { _ = curl_multi_wakeup(multi) }
    }

    private func enqueue(_ command: Command) {
        let wake = inbox.withLock { inbox -> Bool in
            inbox.commands.append(command)
            guard inbox.polling, !inbox.wakePending else { return false }
            inbox.wakePending = true
            return true
        }
        if wake { _ = curl_multi_wakeup(multi) }
    }

    // MARK: - loop thread

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .relaxed)
        var commands: [Command] = []
        while true {
            let shuttingDown = inbox.withLock { inbox -> Bool in
                swap(&commands, &inbox.commands)
                return inbox.shutdown
            }
            for command in commands { apply(command) }
            commands.removeAll(keepingCapacity: true)
            startWaiting()
            if shuttingDown, live.isEmpty, waiting.isEmpty, inbox.withLock({ $0.commands.isEmpty }) { break }

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            var freedSlots = drainCompletions()
            if !live.isEmpty {
                let now = clock.now
                if now >= nextStallCheck {
                    freedSlots = abortStalledTransfers(now: now) || freedSlots
                    nextStallCheck = now + Self.stallCheckInterval
                }
            }
            if freedSlots, !waiting.isEmpty { continue }

            let mayPoll = inbox.withLock { inbox -> Bool in
                guard inbox.commands.isEmpty else { return false }
                inbox.polling = true
                return true
            }
            if mayPoll {
                _ = curl_multi_poll(multi, nil, 0, live.isEmpty ? 1000 : 250, nil)
                inbox.withLock { inbox in
                    inbox.polling = false
                    inbox.wakePending = false
                }
            }
        }
        pool.removeAll()
        curl_multi_cleanup(multi)
        if let defaultHeaderList { curl_slist_free_all(defaultHeaderList) }
    }

    private func apply(_ command: Command) {
        switch command {
        case .start(let transfer):
            if transfer.state.cancelRequested {
                complete(transfer, code: CURLE_OK, cancellation: cancellationError(transfer))
            } else {
                waiting.append(transfer)
            }
        case .cancel(let transfer):
            if isLive(transfer) {
                finish(transfer, code: CURLE_OK, cancellation: cancellationError(transfer))
            } else if waiting.remove(transfer) {
                complete(transfer, code: CURLE_OK, cancellation: cancellationError(transfer))
            } else {
                transfer.state.requestCancel()  // not started yet (or already done: harmless)
            }
        case .resumeReceive(let transfer):
            guard let easy = transfer.easy, let still = transfer.state.resumeReceive() else { return }
            _ = curl_easy_pause(easy.raw, Self.pauseMask(still))
        case .resumeSend(let transfer):
            guard let easy = transfer.easy, let still = transfer.state.resumeSend() else { return }
            _ = curl_easy_pause(easy.raw, Self.pauseMask(still))
        case .run(let job):
            if let executor { job.runSynchronously(on: executor) }
        }
    }

    /// What `curl_easy_pause` is given when one direction resumes and `still` stays paused.
    private static func pauseMask(_ still: TransferState.StillPaused) -> Int32 {
        switch still {
        case .neither: TRAWL_CURLPAUSE_CONT
        case .receive: TRAWL_CURLPAUSE_RECV
        case .send: TRAWL_CURLPAUSE_SEND
        }
    }

    /// Every submitted transfer ends here exactly once.
    private func complete(_ transfer: Transfer, code: CURLcode, cancellation: TrawlError?) {
        transfer.complete(code: code, cancellation: cancellation)
        transfersInProgress.subtract(1, ordering: .relaxed)
    }

    private func cancellationError(_ transfer: Transfer) -> TrawlError {
        transfer.makeError(code: .cancelled, "the request was cancelled")
    }

    private func startWaiting() {
        let limit = configuration.maxConcurrentTransfers
        let perHost = configuration.maxConnectionsPerHost
        while live.count < limit, !waiting.isEmpty {
            let next = waiting.popFirst { origin in
                guard let perHost else { return true }
                return perOrigin[origin, default: 0] < perHost
            }
            guard let transfer = next else { return }
            start(transfer)
        }
    }

    private func start(_ transfer: Transfer) {
        guard let easy = pool.popLast() ?? makeHandle() else {
            complete(transfer, code: CURLE_OK, cancellation: transfer.makeError(
                code: .transport, "libcurl could not create a handle (out of memory?)"))
            return
        }
        transfer.easy = easy
        do {
            try TransferSetup.configure(
                easy, for: transfer, configuration: configuration, defaultHeaderList: defaultHeaderList)
        } catch {
            let failure = (error as? TrawlError)
                ?? transfer.makeError(code: .transport, "the request could not be set up: \(error)")
            complete(transfer, code: CURLE_OK, cancellation: failure)
            recycle(transfer)
            return
        }
        transfer.upload?.start { [weak self, weak transfer] in
            guard let self, let transfer else { return }
            self.resumeSend(transfer)
        }
        let added = curl_multi_add_handle(multi, easy.raw)
        guard added == CURLM_OK else {
            complete(transfer, code: CURLE_OK, cancellation: CurlErrors.multiError(added, transfer: transfer))
            recycle(transfer)
            return
        }
        transfer.liveIndex = live.count
        live.append(transfer)
        if configuration.maxConnectionsPerHost != nil { perOrigin[transfer.request.origin, default: 0] += 1 }
    }

    private func makeHandle() -> EasyHandle? {
        handlesCreated.add(1, ordering: .relaxed)
        return EasyHandle()
    }

    /// Returns whether any transfer ended (freeing a slot).
    private func drainCompletions() -> Bool {
        var freed = false
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            _ = trawl_curl_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &context)
            guard let transfer = currentTransfer(context)?.takeUnretainedValue() else { continue }
            finish(transfer, code: code, cancellation: nil)
            freed = true
        }
        return freed
    }

    /// Fails transfers that moved fewer than their minimum bytes/s over a whole stall window. A window
    /// restarts while the transfer is paused (a slow consumer or body source is not a stalled network).
    private func abortStalledTransfers(now: ContinuousClock.Instant) -> Bool {
        var stalled: [Transfer] = []
        for transfer in live {
            guard let stall = transfer.request.timeouts.stall else { continue }
            guard let start = transfer.stallWindowStart, !transfer.state.isPaused else {
                transfer.stallWindowStart = now
                transfer.stallWindowBytes = transfer.bytesMoved
                continue
            }
            let elapsed = start.duration(to: now)
            guard elapsed >= stall else { continue }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = Double(transfer.bytesMoved - transfer.stallWindowBytes) / seconds
            if rate < Double(transfer.request.timeouts.stallMinimumBytesPerSecond) {
                stalled.append(transfer)
            } else {
                transfer.stallWindowStart = now
                transfer.stallWindowBytes = transfer.bytesMoved
            }
        }
        for transfer in stalled { finish(transfer, code: CURLE_OK, cancellation: transfer.stalledError()) }
        return !stalled.isEmpty
    }

    private func isLive(_ transfer: Transfer) -> Bool {
        guard let index = transfer.liveIndex else { return false }
        return index < live.count && live[index] === transfer
    }

    private func removeLive(_ transfer: Transfer) {
        guard isLive(transfer), let index = transfer.liveIndex else { return }
        let last = live.removeLast()
        if last !== transfer {
            live[index] = last
            last.liveIndex = index
        }
        transfer.liveIndex = nil
    }

    /// Removes a live transfer from the multi handle, completes it and recycles its handle.
    private func finish(_ transfer: Transfer, code: CURLcode, cancellation: TrawlError?) {
        if let easy = transfer.easy { _ = curl_multi_remove_handle(multi, easy.raw) }
        complete(transfer, code: code, cancellation: cancellation)
        removeLive(transfer)
        // A handle that failed, was cancelled or is paused may hold state from that transfer: drop it.
        let reusable = code == CURLE_OK && cancellation == nil && !transfer.state.isPaused
        if configuration.maxConnectionsPerHost != nil, let count = perOrigin[transfer.request.origin] {
            if count <= 1 {
                perOrigin.removeValue(forKey: transfer.request.origin)
            } else {
                perOrigin[transfer.request.origin] = count - 1
            }
        }
        recycle(transfer, reusable: reusable)
    }

    private func recycle(_ transfer: Transfer, reusable: Bool = false) {
        if let list = transfer.headerList {
            curl_slist_free_all(list)
            transfer.headerList = nil
        }
        transfer.upload?.close()
        transfer.upload = nil
        if let easy = transfer.easy {
            easy.context.pointee = nil
            transfer.easy = nil
            if reusable, pool.count < configuration.maxConcurrentTransfers { pool.append(easy) }
        }
    }
}

/// Transfers waiting for a free slot. Without a per-host cap this is one FIFO; with one, a FIFO per
/// origin, origins served round-robin so that a host at its cap does not hold back the others.
struct WaitingQueue {
    private let perOrigin: Bool
    private var fifo = Fifo()
    private var queues: [Origin: Fifo] = [:]
    private var order: [Origin] = []
    private(set) var count = 0

    init(perOrigin: Bool) { self.perOrigin = perOrigin }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ transfer: Transfer) {
        count += 1
        guard perOrigin else { return fifo.append(transfer) }
        let origin = transfer.request.origin
        if queues[origin] == nil { order.append(origin) }
        queues[origin, default: Fifo()].append(transfer)
    }

    mutating func popFirst(where allowed: (Origin) -> Bool) -> Transfer? {
        guard perOrigin else {
            let transfer = fifo.popFirst()
            if transfer != nil { count -= 1 }
            return transfer
        }
        for (position, origin) in order.enumerated() where allowed(origin) {
            guard let transfer = queues[origin]?.popFirst() else { continue }
            count -= 1
            order.remove(at: position)
            if queues[origin]?.isEmpty ?? true {
                queues.removeValue(forKey: origin)
            } else {
                order.append(origin)  // round-robin
            }
            return transfer
        }
        return nil
    }

    mutating func remove(_ transfer: Transfer) -> Bool {
        guard perOrigin else {
            guard fifo.remove(transfer) else { return false }
            count -= 1
            return true
        }
        let origin = transfer.request.origin
        guard queues[origin]?.remove(transfer) ?? false else { return false }
        count -= 1
        if queues[origin]?.isEmpty ?? true {
            queues.removeValue(forKey: origin)
            order.removeAll { $0 == origin }
        }
        return true
    }

    /// An array with a moving head: O(1) amortised append and pop.
    private struct Fifo {
        private var items: [Transfer] = []
        private var head = 0

        var isEmpty: Bool { head == items.count }

        mutating func append(_ transfer: Transfer) { items.append(transfer) }

        mutating func popFirst() -> Transfer? {
            guard head < items.count else { return nil }
            let transfer = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return transfer
        }

        mutating func remove(_ transfer: Transfer) -> Bool {
            guard let index = items[head...].firstIndex(where: { $0 === transfer }) else { return false }
            items.remove(at: index)
            return true
        }
    }
}
