import Foundation
import Synchronization

/// The per-host token buckets and host pauses that every process of a job naming the same rate store shares,
/// kept in Redis: a token is taken by a Lua script (one atomic step at the server, so two processes never take
/// the same one), keys are `trawl:JOB:HOST:…` with JOB the job's fingerprint, and each expires once it no longer
/// matters (a bucket once it would be full again, a pause when it ends).
///
/// The store being unreachable never speeds a process up: `take` answers `.unavailable`, the scheduler falls back to
/// this process's share of the rate (`rate / shards`), a warning is written once, and the store is tried again
/// every `retryInterval` until it answers; then the process rejoins the shared budget.
///
/// ```swift
/// let budget = SharedRateBudget(address: store, job: job.fingerprint, rate: 20, warn: { print($0) })
/// switch await budget.take("http://127.0.0.1:8080") {
/// case .go: break                               // send now
/// case .wait(let wait, _): try await Task.sleep(for: wait)
/// case .unavailable: break                      // use the local share
/// }
/// ```
package final class SharedRateBudget: Sendable {
    package enum Decision: Sendable, Equatable {
        case go
        /// Not yet: `paused` when the host is paused (a process saw `Retry-After`), else no token is left.
        case wait(Duration, paused: Bool)
        case unavailable
    }

    package let address: RateStoreAddress
    package let rate: Double?
    package let namespace: String
    package let retryInterval: Duration
    package let timeout: Duration
    private let warn: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "trawl.rate-store")
    private let connection = Connection()
    /// Bumped each time the store is lost, so the scheduler knows to start its local share afresh.
    private let state = Mutex(Health())

    private struct Health {
        var available = true
        var retryAt: ContinuousClock.Instant?
        var losses = 0
        var warned = false
    }

    /// The connection and the SHA1s of the scripts loaded on it; used on `queue` only.
    private final class Connection: @unchecked Sendable {
        var redis: RedisConnection?
        var shas: [String: String] = [:]
    }

    package init(
        address: RateStoreAddress, job: String, rate: Double?, retryInterval: Duration = .seconds(1),
        timeout: Duration = .seconds(2), warn: @escaping @Sendable (String) -> Void
    ) {
        self.address = address
        self.rate = rate
        self.namespace = "trawl:\(job):"
        self.retryInterval = retryInterval
        self.timeout = timeout
        self.warn = warn
    }

    /// Whether the store should be asked now: it answered last time, or it is time to try it again.
    package var shouldAsk: Bool {
        state.withLock { health in health.available || (health.retryAt.map { ContinuousClock.now >= $0 } ?? true) }
    }

    /// How many times the store has been lost so far.
    package var losses: Int { state.withLock { $0.losses } }

    /// Takes a token for a request to `host` (one of the `rate` per second shared by every process), unless the
    /// host is paused.
    package func take(_ host: String) async -> Decision {
        let rate = self.rate
        let burst = max(1, rate ?? 1)
        let arguments = [
            String(rate ?? 0), String(burst), String(Int64((burst / max(rate ?? 1, 1e-9) + 2) * 1000)),
        ]
        let answer = await run(script: .take, keys: [key(host, "bucket"), key(host, "pause")], arguments)
        guard case .array(let fields?)? = answer, fields.count == 3,
            let go = fields[0].text, let seconds = fields[1].text.flatMap(Double.init), let kind = fields[2].text
        else { return .unavailable }
        if go == "1" { return .go }
        return .wait(.boundedSeconds(max(seconds, 0.001)), paused: kind == "pause")
    }

    /// Pauses `host` for every process, for `duration` from now (a longer pause already set stays).
    package func pause(_ host: String, for duration: Duration) async {
        _ = await run(script: .pause, keys: [key(host, "pause")], [String(duration.seconds)])
    }

    private func key(_ host: String, _ kind: String) -> String { namespace + host + ":" + kind }

    /// A Lua script the store runs (by SHA1 once loaded on a connection).
    package struct Script: Sendable, Hashable {
        package let text: String
        package init(text: String) { self.text = text }
        package static let take = Script(text: RateStoreScripts.take)
        package static let pause = Script(text: RateStoreScripts.pause)
    }

    /// Runs `script` at the store; `nil` when the store is not asked now (out of reach until `retryAt`), cannot be
    /// reached or answered with an error. Every answer or failure counts towards the store's health (warned once).
    package func run(script: Script, keys: [String], _ arguments: [String]) async -> RESPValue? {
        guard shouldAsk else { return nil }
        let connection = self.connection
        let answer: RESPValue? = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.evaluate(script, keys, arguments, on: connection)) }
        }
        report(answer != nil)
        return answer
    }

    /// Runs a script (by SHA1, loading it on a fresh connection or after the server lost it); `nil` when the store
    /// cannot be reached or answered with an error.
    private func evaluate(_ script: Script, _ keys: [String], _ arguments: [String], on connection: Connection)
        -> RESPValue?
    {
        do {
            if connection.redis == nil {
                let redis = try RedisConnection(address, timeout: timeout)
                connection.shas = [:]
                for loaded in [Script.take, Script.pause] {
                    connection.shas[loaded.text] = try load(loaded.text, on: redis)
                }
                connection.redis = redis
            }
            guard let redis = connection.redis else { return nil }
            let sha: String
            if let known = connection.shas[script.text] {
                sha = known
            } else {
                sha = try load(script.text, on: redis)
                connection.shas[script.text] = sha
            }
            let command = [String(keys.count)] + keys + arguments
            var answer = try redis.command(["EVALSHA", sha] + command)
            if case .error(let message) = answer, message.hasPrefix("NOSCRIPT") {
                answer = try redis.command(["EVAL", script.text] + command)
            }
            if case .error = answer { return nil }
            return answer
        } catch {
            connection.redis = nil
            return nil
        }
    }

    private func load(_ script: String, on redis: RedisConnection) throws -> String {
        let answer = try redis.command(["SCRIPT", "LOAD", script])
        guard let sha = answer.text, case .bulk = answer else {
            throw RedisConnection.Failure(description: "SCRIPT LOAD failed: \(answer)")
        }
        return sha
    }

    private func report(_ answered: Bool) {
        let message: String? = state.withLock { health in
            if answered {
                defer {
                    health.available = true
                    health.retryAt = nil
                }
                return health.available ? nil : "trawl: the rate store \(address) answers again: sharing its budget"
            }
            health.retryAt = ContinuousClock.now + retryInterval
            guard health.available else { return nil }
            health.available = false
            health.losses += 1
            guard !health.warned else { return nil }
            health.warned = true
            return "trawl: warning: the rate store \(address) does not answer: this process keeps to its own "
                + "share of the rate until it is back"
        }
        if let message { warn(message) }
    }
}

/// The Lua scripts the store runs. Times come from the server's clock (`TIME`), so processes on machines whose
/// clocks differ still share one bucket; numbers go back as strings (Redis would truncate Lua numbers to integers).
package enum RateStoreScripts {
    /// KEYS: bucket, pause. ARGV: rate, burst, expiry in ms. Answers {go, seconds to wait, "token" or "pause"}.
    package static let take = """
        local now = redis.call('TIME')
        local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
        local paused = tonumber(redis.call('GET', KEYS[2]) or '0')
        if paused > t then return {'0', tostring(paused - t), 'pause'} end
        local rate = tonumber(ARGV[1])
        if rate <= 0 then return {'1', '0', 'token'} end
        local burst = tonumber(ARGV[2])
        local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens = tonumber(bucket[1]) or burst
        local at = tonumber(bucket[2]) or t
        tokens = math.min(burst, tokens + math.max(0, t - at) * rate)
        local wait = 0
        if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
        redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(t))
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        if wait > 0 then return {'0', tostring(wait), 'token'} end
        return {'1', '0', 'token'}
        """

    /// KEYS: pause. ARGV: seconds. Moves the host's pause end later (never earlier); it expires when it ends.
    package static let pause = """
        local now = redis.call('TIME')
        local t = tonumber(now[1]) + tonumber(now[2]) / 1000000
        local seconds = tonumber(ARGV[1])
        local current = tonumber(redis.call('GET', KEYS[1]) or '0')
        if t + seconds > current then
            redis.call('SET', KEYS[1], tostring(t + seconds), 'PX', math.ceil(seconds * 1000) + 1)
        end
        return 1
        """
}
