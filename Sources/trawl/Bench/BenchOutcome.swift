import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import TrawlBench

/// After a bench run: the summary, the thresholds, the `.hgrm` file and the exit status (0; 1 when no request
/// succeeded; 3 when a threshold failed; 130 after Ctrl-C).
extension Bench {
    func thresholds() throws -> [BenchThreshold] {
        do {
            return try threshold.map { text throws(BenchThreshold.ParseError) in try BenchThreshold(text) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// A file the run will write: fails before the run when it cannot be written (no directory, a directory,
    /// no permission), without creating it.
    static func validateWritable(_ path: String, flag: String) throws {
        guard !path.isEmpty else { throw ValidationError("\(flag) needs a file name") }
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw ValidationError("\(flag) '\(path)' is a directory: give a file name") }
            guard access(url.path, W_OK) == 0 else {
                throw ValidationError("\(flag) '\(path)' cannot be written (permission denied)")
            }
            return
        }
        let directory = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("\(flag) '\(path)': the directory '\(directory)' does not exist")
        }
        guard access(directory, W_OK) == 0 else {
            throw ValidationError(
                "\(flag) '\(path)': the directory '\(directory)' cannot be written (permission denied)")
        }
    }

    func validateRates() throws {
        guard let rateSpec else {
            if ramp != nil { throw ValidationError("--ramp needs --rate START:END (the rates at its start and end)") }
            return
        }
        guard let rates else {
            throw ValidationError("--rate must be a number of requests per second, or START:END, not '\(rateSpec)'")
        }
        for value in [rates.start, rates.end].compactMap({ $0 }) {
            if !(value > 0) || !value.isFinite {
                throw ValidationError("--rate must be a positive number of requests per second")
            }
            if value > 1e7 { throw ValidationError("--rate must be at most 10000000 requests per second") }
            if value < 1 / NumberOption.longestSeconds {
                // 1/rate seconds between requests must fit a Duration: 1e-300 trapped.
                throw ValidationError(
                    "The value '\(rateSpec)' is invalid for '--rate': give at least \(1 / NumberOption.longestSeconds) "
                        + "requests per second")
            }
        }
        if rates.end != nil, ramp == nil {
            throw ValidationError(
                "--rate START:END needs --ramp SECONDS (how long the rate takes to go from START to END)")
        }
        if let ramp {
            guard rates.end != nil else {
                throw ValidationError("--ramp needs --rate START:END (the rates at its start and end)")
            }
            if !(ramp > 0) || !(ramp <= 1e6) {
                throw ValidationError("--ramp must be from more than 0 to 1000000 seconds, not \(ramp)")
            }
        }
    }

    /// `--report OUT.html A.json B.json`: the positional arguments are result files, not URLs.
    var reportsFiles: Bool { report != nil && !urls.isEmpty && urls.allSatisfy { !$0.contains("://") } }

    static func writeReport(of files: [String], to path: String) throws {
        var runs: [BenchHTMLReport.Run] = []
        for file in files {
            do {
                runs.append(try BenchHTMLReport.read(file))
            } catch {
                throw CLIFailure("error: \(error.description)")
            }
        }
        try writeReport(BenchHTMLReport.html(runs), to: path)
    }

    static func writeReport(_ html: String, to path: String) throws {
        try ReportFile.write(Array(html.utf8), to: path, flag: "--report")
    }

    /// Facts of the run the JSON and the report carry besides the measurements.
    private func parameters() -> [String: Any] {
        let plan: String = if let duration {
            "duration \(String(format: "%g", duration)) s"
        } else if let requests {
            "requests \(requests)"
        } else {
            rate == nil ? "requests 20000" : "duration \(String(format: "%g", max(10, ramp ?? 0))) s"
        }
        return [
            "method": method ?? (body == nil ? "GET" : "POST"),
            "plan": plan,
            "http_version": http2 ? "2" : "1.1",
            "trawl_version": TrawlVersion.current,
            "cores": ProcessInfo.processInfo.activeProcessorCount,
        ]
    }

    func finish(_ reports: [BenchReport], embeddedServer: Bool) throws {
        guard let report = reports.last else { return }
        let checks = (try? thresholds()) ?? []
        var extra = parameters()
        if reports.count > 1 { extra["rounds"] = reports.map(BenchRounds.summary) }
        if !checks.isEmpty { extra["thresholds"] = checks.map { $0.json(for: report) } }
        let jsonText = report.json(extra: extra)
        if let path = self.report {
            let object = (try? JSONSerialization.jsonObject(with: Data(jsonText.utf8))) as? [String: Any] ?? [:]
            let page = BenchHTMLReport.html([BenchHTMLReport.Run(label: "this run", object: object)])
            try Self.writeReport(page, to: path)
        }
        if json {
            print(jsonText)
            // The summary reaches stdout before any line on stderr: a `2>&1` log reads top to bottom.
            fflush(nil)
            for check in checks { FileHandle.standardError.write(Data((check.line(for: report) + "\n").utf8)) }
        } else {
            print(report.table(embeddedServer: embeddedServer, allIntervals: interval != nil))
            for check in checks { print(check.line(for: report)) }
        }
        if store.rateStore != nil {
            let line = "merge: save each process's --json and run: trawl bench --merge A.json B.json … > all.json "
                + "(exact percentiles over every process)"
            if json { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
        }
        fflush(nil)
        if let hgrm {
            try ReportFile.write(Array(report.hgrm().utf8), to: hgrm, flag: "--hgrm")
            if let service = report.serviceHgrm() {
                try ReportFile.write(Array(service.utf8), to: BenchReport.serviceHgrmPath(hgrm), flag: "--hgrm")
            }
        }
        if report.interrupted { throw ExitCode(130) }
        if report.completed == 0 { throw CLIFailure("error: no request succeeded") }
        if checks.contains(where: { !$0.holds(in: report) }) {
            let failed = checks.filter { !$0.holds(in: report) }.count
            FileHandle.standardError.write(Data("error: \(failed) threshold(s) failed\n".utf8))
            throw ExitCode(3)
        }
    }
}

extension Bench {
    /// `--merge A.json B.json …`: the merged result as JSON on stdout, judged by the thresholds (exit 3).
    func mergeResults() throws {
        var inputs: [(name: String, object: [String: Any])] = []
        let merged: BenchReport
        do throws(BenchMerge.Problem) {
            for file in urls { inputs.append((file, try BenchMerge.read(file))) }
            merged = try BenchMerge.merge(inputs)
        } catch {
            throw CLIFailure("error: \(error.description)")
        }
        let checks = try thresholds()
        var extra: [String: Any] = ["merged_from": urls]
        if !checks.isEmpty { extra["thresholds"] = checks.map { $0.json(for: merged) } }
        let jsonText = merged.json(extra: extra)
        if let path = report {
            let object = (try? JSONSerialization.jsonObject(with: Data(jsonText.utf8))) as? [String: Any] ?? [:]
            try Self.writeReport(BenchHTMLReport.html([BenchHTMLReport.Run(label: "merged", object: object)]), to: path)
        }
        print(jsonText)
        fflush(nil)
        for check in checks { FileHandle.standardError.write(Data((check.line(for: merged) + "\n").utf8)) }
        let failed = checks.filter { !$0.holds(in: merged) }.count
        if failed > 0 {
            FileHandle.standardError.write(Data("error: \(failed) threshold(s) failed\n".utf8))
            throw ExitCode(3)
        }
    }

    /// `--compare BEFORE.json AFTER.json`: the side-by-side table of two result files.
    static func compare(_ before: String, _ after: String, force: Bool) throws {
        do {
            let differences = BenchRounds.differences(
                try BenchRounds.result(of: before), try BenchRounds.result(of: after))
            if !differences.isEmpty, !force {
                let lines = ["error: --compare: the runs differ in what was measured, so neither is better:"]
                    + differences.map { "  " + $0 } + ["(--force compares them anyway)"]
                FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
                throw ExitCode(2)
            }
            print(BenchRounds.comparison(
                before: (before, try BenchRounds.rounds(of: before)), after: (after, try BenchRounds.rounds(of: after))))
            for difference in differences { print("  note: the runs differ in \(difference) (--force)") }
        } catch let error as BenchResultFileError {
            switch error.problem {
            case .unreadable:
                throw CLIFailure("error: --compare: cannot read '\(error.path)' (give result files of trawl bench --json)")
            case .notABenchResult:
                throw CLIFailure("error: --compare: '\(error.path)' is not a result of trawl bench --json")
            }
        }
    }
}

/// Ctrl-C during a bench run: the first stops sending and lets the summary print (exit 130); a second exits at
/// once.
enum BenchInterrupt {
    static func run(recorder: BenchRecorder, _ body: @escaping @Sendable () async -> BenchReport) async -> BenchReport {
        let running = Mutex<Task<BenchReport, Never>?>(nil)
        // Armed before the first request: a Ctrl-C once requests flow is never lost.
        let trap = await InterruptTrap.arm {
            if recorder.isStopped { _exit(130) }
            recorder.requestStop()
            running.withLock { $0 }?.cancel()
        }
        let task = Task { await body() }
        running.withLock { $0 = task }
        let report = await task.value
        trap.disarm()
        return report
    }
}
