import Foundation

extension JobSettings {
    /// The per-host rate this process applies on its own: its `1/shards` share of `ratePerHost` (eight shards
    /// each applying the whole rate would send eight times the load). With a rate store this is the fallback
    /// while the store is out of reach.
    ///
    /// ```swift
    /// var settings = JobSettings()
    /// settings.ratePerHost = 20
    /// settings.localRate(shards: 4)   // 5
    /// ```
    public func localRate(shards: Int) -> Double? {
        guard let ratePerHost else { return nil }
        return ratePerHost / Double(max(1, shards))
    }

    /// What a sharded run without a store says first: that its rate is a share of the job's. `nil` when nothing
    /// is divided.
    public func shardRateNotice(shards: Int) -> String? {
        guard let ratePerHost, let local = localRate(shards: shards), shards > 1, rateStore == nil else { return nil }
        return "rate: \(Self.format(ratePerHost))/s per host is split between \(shards) shards without a "
            + "--rate-store: this shard sends at most \(Self.format(local))/s per host"
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() && abs(rate) < 1e15 ? String(Int64(rate)) : String(format: "%.3g", rate)
    }
}
