import Foundation

extension JobSettings {
    /// The per-host rate this process applies on its own: the whole `ratePerHost` with a shared store or
    /// unsharded, its `1/shards` share otherwise (eight shards would send eight times the load).
    ///
    /// ```swift
    /// var settings = JobSettings()
    /// settings.ratePerHost = 20
    /// settings.localRate(shards: 4)   // 5
    /// ```
    public func localRate(shards: Int) -> Double? {
        guard let ratePerHost else { return nil }
        return rateStore == nil ? ratePerHost / Double(max(1, shards)) : ratePerHost
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
