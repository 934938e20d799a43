import ArgumentParser
import Foundation
import TrawlJobs

/// `trawl fetch`'s flags for running a job past one machine, on top of a job file's `settings`.
struct ClusterFlags: ParsableArguments {
    /// Says on stderr, before anything else, what a shard does differently from a whole run (its share of the
    /// rate when no store shares the budget).
    func announce(_ settings: JobSettings, shard: Shard?) {
        if let notice = settings.shardRateNotice(shards: shard?.count ?? 1) {
            FileHandle.standardError.write(Data("trawl: \(notice)\n".utf8))
        }
    }
}
