import ArgumentParser
import TrawlBench

/// The spans of time `trawl bench` takes (`-d`, `--timeout`, `--warmup`, `--ramp`, `--interval`,
/// `--connect-timeout`): plain seconds as before, or with a unit (`500ms`, `2s`, `1m`, `1h`, `1m30s`).
enum BenchDurationOption {
    static func seconds(_ text: String, positive: Bool = false) throws -> Double {
        guard let value = BenchDurationText.seconds(text), !positive || value > 0 else {
            throw ValidationError(
                "give a span of time\(positive ? " above 0" : ""): seconds (2, 0.5) or with a unit (500ms, 2s, 1m, 1h)")
        }
        return value
    }

    static func positiveSeconds(_ text: String) throws -> Double { try seconds(text, positive: true) }
}
