import ArgumentParser
import Foundation
import TrawlBench
import TrawlEngine

extension Bench {
    func validateCapacitySearch() throws {
        guard findMaxRate else {
            if maxRate != nil { throw ValidationError("--max-rate goes with --find-max-rate") }
            return
        }
        guard let maxRate else { throw ValidationError("--find-max-rate needs --max-rate R (the highest rate to try)") }
        if !(maxRate >= 1) || !(maxRate <= 1e7) {
            throw ValidationError("--max-rate must be from 1 to 10000000 requests per second")
        }
        if threshold.isEmpty {
            throw ValidationError("--find-max-rate needs at least one --threshold (the budget each rate must meet)")
        }
        if rateSpec != nil || requests != nil || items != nil || report != nil || hgrm != nil {
            throw ValidationError(
                "--find-max-rate chooses the rates itself and runs steps of -d seconds: drop --rate, -n, --items, "
                    + "--report and --hgrm")
        }
    }

    /// Runs the search and prints the evidence of each step and the rate found.
    func searchMaxRate(client: Client, urls: [String], target: BenchRunner.Target) async throws {
        guard let maxRate else { return }
        let stepSeconds = duration ?? 3
        let warmupSeconds = warmup ?? 0.5
        let output: (String) -> Void = json
            ? { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
            : { print($0) }
        output(String(format: "find-max-rate: steady steps of %g s after %g s of warm-up each, up to %g req/s",
                      stepSeconds, warmupSeconds, maxRate))
        let search = BenchCapacitySearch(
            maxRate: maxRate, checks: try thresholds(),
            run: { rate in
                let warmupSpan = Duration.nanoseconds(Int64(warmupSeconds * 1e9))
                let recorder = BenchRecorder(
                    origin: .now + warmupSpan, interval: .seconds(1), stripes: client.executors.count)
                var runner = BenchRunner(
                    client: client, urls: urls, target: target, concurrency: concurrency,
                    limit: .duration(.nanoseconds(Int64(stepSeconds * 1e9))), recorder: recorder)
                runner.warmup = warmupSpan
                runner.rate = rate
                return await runner.run()
            },
            report: { output(BenchCapacitySearch.line($0)) })
        let steps = await search.search()
        let best = BenchCapacitySearch.best(steps)
        let limited = steps.first { $0.clientLimited }
        var summary: String
        if let best {
            summary = String(format: "max rate: %g req/s (every threshold held)", best)
            if best >= maxRate { summary += "; --max-rate was reached: raise it to search higher" }
        } else {
            summary = "max rate: none (no rate tried met every threshold)"
        }
        if let limited {
            summary += String(
                format: "\nthe client could not keep up at %g req/s (late starts with its CPU busy): the server was "
                    + "not the limit there, so the rate found is a lower bound; raise --loops or run the client on "
                    + "more cores", limited.rate)
        }
        output(summary)
        if json {
            var object = BenchCapacitySearch.json(steps, maxRate: maxRate)
            object["thresholds"] = threshold
            object["version"] = BenchReport.formatVersion
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        }
        if best == nil { throw limited == nil ? ExitCode(3) : CLIFailure("error: the client could not keep up") }
    }
}
