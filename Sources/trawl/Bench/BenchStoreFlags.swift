import ArgumentParser
import Foundation
import TrawlBench
import TrawlEngine
import TrawlJobs

/// `trawl bench`'s flags for generating load from several machines: one `--rate` shared through a rate store.
struct BenchStoreFlags: ParsableArguments {
    @Option(
        name: .customLong("rate-store"),
        help: ArgumentHelp(
            "Share --rate with every trawl bench naming this store and key: redis://HOST:PORT[/DB].",
            discussion: "--rate is then what all of them send together; a Retry-After seen by one pauses them "
                + "all. Needs --rate."))
    var rateStore: String?

    @Option(
        name: .customLong("rate-key"),
        help: ArgumentHelp(
            "With --rate-store: the name of the shared budget (default: derived from the method and the URLs).",
            valueName: "NAME"))
    var rateKey: String?

    @Option(
        name: .customLong("processes"),
        help: ArgumentHelp(
            "With --rate-store: how many processes share --rate, for the share each keeps to while the store "
                + "does not answer (default: as many as it last saw live through the store).",
            valueName: "N"))
    var processes: Int?

    /// Checks the flags against the bench's own: `rate` is `--rate`'s text.
    func validate(rate: String?, ramp: Bool, findMaxRate: Bool) throws {
        guard let rateStore else {
            if rateKey != nil { throw ValidationError("--rate-key names a budget of --rate-store: give both") }
            if processes != nil { throw ValidationError("--processes goes with --rate-store (and --rate)") }
            return
        }
        do {
            _ = try RateStoreAddress.parse(rateStore)
        } catch {
            throw ValidationError("--rate-store: \(error)")
        }
        guard rate != nil else {
            throw ValidationError(
                "--rate-store needs --rate R: the requests per second that every process naming the store sends "
                    + "together")
        }
        if ramp { throw ValidationError("--rate-store does not go with --ramp: the shared rate is one number") }
        if findMaxRate { throw ValidationError("--rate-store does not go with --find-max-rate") }
        if let rateKey {
            guard !rateKey.isEmpty, rateKey.count <= 200,
                rateKey.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 })
            else {
                throw ValidationError(
                    "--rate-key must be 1 to 200 printable ASCII characters without spaces, not '\(rateKey)'")
            }
        }
        if let processes, !(1...100_000).contains(processes) {
            throw ValidationError("--processes must be from 1 to 100000")
        }
    }

    /// The shared schedule of a run at `rate` requests/s on `requests`, or `nil` without a store.
    func schedule(rate: Double?, requests: [Request]) -> SharedBenchSchedule? {
        guard let rateStore, let rate, let address = try? RateStoreAddress.parse(rateStore) else { return nil }
        return SharedBenchSchedule(
            address: address, key: rateKey ?? Self.defaultKey(requests), rate: rate, processes: processes ?? 1,
            warn: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
    }

    /// The same bench command on several machines shares one budget: the key is a hash (FNV-1a, 64 bits) of the
    /// method and the URLs, so that neither a URL's credentials nor its query reach the store's key names.
    static func defaultKey(_ requests: [Request]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let text = requests.map { "\($0.method.rawValue) \($0.url)" }.joined(separator: "\n")
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
