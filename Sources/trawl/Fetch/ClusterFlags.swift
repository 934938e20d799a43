import ArgumentParser
import Foundation
import TrawlJobs

/// `trawl fetch`'s flags for running a job past one machine, on top of a job file's `settings`.
struct ClusterFlags: ParsableArguments {
    @Option(
        name: .customLong("rate-store"),
        help: """
            Share --rate and the host pauses (Retry-After, rate-limit headers) with every process of the same job \
            naming this store: redis://HOST:PORT[/DB] (over the job file's settings.rate_store).
            """)
    var rateStore: String?

    @Flag(
        name: .customLong("adaptive"),
        help: """
            Per host, halve the requests in flight on 429/503 or a rate-limit pause and add one after a window \
            without them, between 1 and --per-host (over the job file's settings.adaptive).
            """)
    var adaptive = false

    func validate() throws {
        if let rateStore {
            do {
                _ = try RateStoreAddress.parse(rateStore)
            } catch {
                throw ValidationError("--rate-store: \(error)")
            }
        }
    }

    /// The job's settings with these flags over them.
    func apply(to settings: inout JobSettings) {
        if let rateStore, let address = try? RateStoreAddress.parse(rateStore) { settings.rateStore = address }
        if adaptive { settings.adaptive = true }
    }

    /// Says on stderr, before anything else, what a shard does differently from a whole run (its share of the
    /// rate when no store shares the budget).
    func announce(_ settings: JobSettings, shard: Shard?) {
        if let notice = settings.shardRateNotice(shards: shard?.count ?? 1) {
            FileHandle.standardError.write(Data("trawl: \(notice)\n".utf8))
        }
    }
}
