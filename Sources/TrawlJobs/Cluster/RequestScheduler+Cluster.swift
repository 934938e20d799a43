import Foundation

extension RequestScheduler {
    /// The scheduler of a job's run: the job's limits, this process's share of the rate, and the budget shared
    /// through `settings.rateStore` (keyed by `job`, the job's fingerprint) when there is one.
    init(settings: JobSettings, options: JobRunOptions, job: String) {
        let shared = settings.rateStore.map { address in
            SharedRateBudget(
                address: address, job: job, rate: settings.ratePerHost,
                warn: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
        }
        self.init(
            concurrency: settings.concurrency, perHost: settings.perHost,
            rate: settings.localRate(shards: options.shardCount), maxWait: settings.maxWait,
            shared: shared, adaptive: settings.adaptive)
    }
}
