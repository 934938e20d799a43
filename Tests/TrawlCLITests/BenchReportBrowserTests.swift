import Foundation
import Testing
import TrawlTestSupport
import TrawlTestServer

/// Debian's Chromium, installed by scripts/ensure-deps.
private let chromium = URL(fileURLWithPath: "/usr/bin/chromium")

/// Runs headless Chromium on `page` with `flags` (--dump-dom, --screenshot=…); returns its exit status, stdout
/// (the DOM after the page's script ran) and stderr (with the page's console messages).
private func headless(_ flags: [String], page: String, in workspace: Workspace, width: Int = 1000) async throws
    -> (status: Int32, stdout: String, stderr: String)
{
    try #require(
        FileManager.default.isExecutableFile(atPath: chromium.path),
        "Chromium is missing: run scripts/ensure-deps")
    let child = try TrawlProcess(
        ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--user-data-dir=" + workspace.path("chromium-profile"), "--enable-logging=stderr", "--v=0",
         "--window-size=\(width),1400"] + flags + ["file://" + workspace.path(page)],
        in: workspace, environment: ["HOME": workspace.directory.path], executable: chromium)
    let status = try await child.wait(timeout: .seconds(90))
    return (status, child.stdout, child.stderr)
}

/// The series drawn in the report's SVG charts: name -> points, read back from the DOM Chromium rendered.
private func drawnSeries(_ dom: String) throws -> [String: [[Double]]] {
    var series: [String: [[Double]]] = [:]
    let pattern = try Regex(#"<polyline [^>]*data-series="([^"]*)" data-points="([^"]*)""#)
    for match in dom.matches(of: pattern) {
        guard let name = match.output[1].substring, let points = match.output[2].substring else { continue }
        let json = points.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
        series[String(name)] = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[Double]]
    }
    return series
}

private func close(_ a: [[Double]], _ b: [[Double]]) -> Bool {
    a.count == b.count && zip(a, b).allSatisfy { pair in
        pair.0.count == 2 && pair.1.count == 2
            && zip(pair.0, pair.1).allSatisfy { abs($0 - $1) <= 1e-9 * max(1, abs($0)) }
    }
}

/// `trawl bench --report`, opened in a real browser (headless Chromium).
@Suite("trawl bench --report in Chromium", .serialized, .endToEnd)
struct BenchReportBrowserTests {
    @Test func reportFitsEveryWidthFrom700To1920WithHeadlineNumbersFirst() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            // A long URL and two runs: the table and the legends must not widen the page.
            let long = server.url("/json/small") + "?" + (1...12).map { "parameter\($0)=value\($0)" }.joined(separator: "&")
            for file in ["a.json", "b.json"] {
                let run = try await trawl(
                    ["bench", "--json", "--quiet", "-d", "1", "--interval", "250ms", "-c", "32", "--rate", "400",
                     long, server.url("/json/small")], in: workspace)
                #expect(run.status == 0, "\(run.stderr)")
                try workspace.write(file, run.stdout)
            }
            let made = try await trawl(["bench", "--report", "both.html", "a.json", "b.json"], in: workspace)
            #expect(made.status == 0, "\(made.stderr)")
            for width in [700, 1400, 1920] {
                let loaded = try await headless(["--dump-dom"], page: "both.html", in: workspace, width: width)
                let dom = loaded.stdout
                #expect(dom.contains("data-drawn=\"2\""), "\(loaded.stderr)")
                let scroll = try #require(dom.firstMatch(of: /data-scroll-width="(\d+)"/)).output.1
                let inner = try #require(dom.firstMatch(of: /data-inner-width="(\d+)"/)).output.1
                #expect(Int(scroll) ?? .max <= Int(inner) ?? 0, "at \(width) px: scrollWidth \(scroll) > \(inner)")
                // Headline numbers come before the first chart; the service times are there (open model).
                let headline = try #require(dom.range(of: "id=\"headline\""))
                let firstChart = try #require(dom.range(of: "<svg "))
                #expect(headline.lowerBound < firstChart.lowerBound)
                #expect(dom.contains("service p99 ms"))
                #expect(dom.contains("title=\"\(long.replacingOccurrences(of: "&", with: "&amp;"))"), "the whole URL in a title")
            }
            let shot = try await headless(
                ["--screenshot=" + workspace.path("narrow.png")], page: "both.html", in: workspace, width: 700)
            #expect(shot.status == 0)
            #expect(workspace.data("narrow.png").count > 10_000)
        }
    }

    @Test func reportLoadsWithoutConsoleErrorsIsSelfContainedAndNotBlank() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let url = server.url("/json/small").replacingOccurrences(of: "http://", with: "http://bench:pw0rd@")
                + "?token=s3cret&q=1"
            let run = try await trawl(
                ["bench", "--quiet", "-d", "1", "--interval", "0.25", "-c", "4", "--report", "run.html", url],
                in: workspace)
            #expect(run.status == 0, "\(run.stderr)")
            let html = workspace.text("run.html")
            #expect(html.hasPrefix("<!DOCTYPE html>"))
            #expect(!html.contains("s3cret") && !html.contains("pw0rd"), "secrets are redacted")
            #expect(html.contains("token=REDACTED"))
            for external in ["src=", "href=", "@import", "url("] {
                #expect(!html.contains(external), "the page loads nothing from outside (\(external))")
            }

            let loaded = try await headless(["--dump-dom"], page: "run.html", in: workspace)
            #expect(loaded.status == 0, "\(loaded.stderr)")
            #expect(loaded.stdout.contains("data-drawn=\"1\""), "the page's script ran to the end")
            #expect(loaded.stdout.components(separatedBy: "<svg ").count - 1 == 5, "five charts")
            let console = loaded.stderr.split(separator: "\n").filter { $0.contains("CONSOLE") }
            #expect(console.isEmpty, "console messages: \(console)")
            #expect(!loaded.stderr.contains("Uncaught"), "\(loaded.stderr)")

            // Not blank: the screenshot of the report is far larger than one of an empty page of the same size
            // (a PNG of one colour compresses to almost nothing).
            try workspace.write("blank.html", "<!DOCTYPE html><html><body></body></html>")
            for (page, shot) in [("run.html", "run.png"), ("blank.html", "blank.png")] {
                let result = try await headless(["--screenshot=" + workspace.path(shot)], page: page, in: workspace)
                #expect(result.status == 0, "\(result.stderr)")
            }
            let report = workspace.data("run.png")
            let blank = workspace.data("blank.png")
            #expect(report.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
            #expect(blank.count > 0 && report.count > blank.count * 5, "\(report.count) vs \(blank.count) bytes")
        }
    }

    @Test func twoResultsAreDrawnOnTheSameAxesWithTheirJSONData() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try await TestServer.with { server in
            let url = server.url("/json/small")
            for (file, flags) in [("before.json", ["-c", "2"]), ("after.json", ["--rate", "400", "-c", "4"])] {
                let run = try await trawl(
                    ["bench", "--json", "-d", "1", "--interval", "0.25"] + flags + [url], in: workspace)
                #expect(run.status == 0, "\(run.stderr)")
                try workspace.write(file, run.stdout)
            }
            let made = try await trawl(["bench", "--report", "cmp.html", "before.json", "after.json"], in: workspace)
            #expect(made.status == 0, "\(made.stderr)")
            #expect(made.stdout.isEmpty, "no run")
            let loaded = try await headless(["--dump-dom"], page: "cmp.html", in: workspace)
            #expect(loaded.stdout.contains("data-drawn=\"2\""), "\(loaded.stderr)")
            let drawn = try drawnSeries(loaded.stdout)
            for file in ["before.json", "after.json"] {
                let result = try jsonObject(workspace.data(file))
                let rows = try #require(result["intervals"] as? [[String: Any]])
                #expect(!rows.isEmpty)
                func value(_ row: [String: Any], _ key: String) -> Double { (row[key] as? NSNumber)?.doubleValue ?? -1 }
                let mids = rows.map { (value($0, "start_s") + value($0, "end_s")) / 2 }
                // Rates leave out a partial last row shorter than half an interval.
                let interval = (result["interval_s"] as? NSNumber)?.doubleValue ?? 1
                let rated = zip(rows, mids).filter { row, _ in
                    !(row["partial"] as? Bool == true && value(row, "end_s") - value(row, "start_s") < interval / 2)
                }
                let rps = rated.map { row, mid in
                    [mid, value(row, "requests") / (value(row, "end_s") - value(row, "start_s"))]
                }
                #expect(close(drawn["\(file) requests/s"] ?? [], rps), "\(drawn["\(file) requests/s"] ?? [])")
                for key in ["p50", "p99", "max"] {
                    let expected = zip(rows, mids).map { row, mid in [mid, value(row, key + "_ms")] }
                    #expect(close(drawn["\(file) \(key)"] ?? [], expected), "\(file) \(key)")
                }
                let distribution = try #require(result["distribution_ms"] as? [[String: Any]])
                let expected = distribution.filter { value($0, "percentile") < 100 }
                    .map { [value($0, "percentile"), value($0, "ms")] }
                #expect(close(drawn["\(file) latency"] ?? [], expected), "\(file) distribution")
                let ok = rated.map { row, mid in
                    [mid, Double((row["statuses"] as? [String: Int])?["2xx"] ?? -1)
                        / (value(row, "end_s") - value(row, "start_s"))]
                }
                #expect(close(drawn["\(file) 2xx"] ?? [], ok), "\(file) statuses")
            }
        }
    }

    @Test func aFileThatIsNotAResultFailsNamingIt() async throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.write("other.json", #"{"items": []}"#)
        let result = try await trawl(["bench", "--report", "x.html", "other.json"], in: workspace)
        #expect(result.status == 1)
        #expect(result.stderr.contains("'other.json' is not a result of trawl bench --json"), "\(result.stderr)")
        #expect(!workspace.exists("x.html"))
    }
}
