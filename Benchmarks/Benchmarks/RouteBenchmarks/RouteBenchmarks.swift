// Request building through the routes layer and RFC 8288 `Link` header parsing: pure CPU, no I/O.
import Benchmark
import Trawl
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The tolerance (percent) on time-based metrics: `TRAWL_BENCH_TIME_TOLERANCE`, else `fallback`.
/// `micro.sh --check-mallocs` sets it very high so that only malloc counts are checked (busy machine).
func timeTolerance(_ fallback: Double) -> Double {
    guard let raw = getenv("TRAWL_BENCH_TIME_TOLERANCE"), let value = Double(String(cString: raw)) else {
        return fallback
    }
    return value
}

/// A typical search endpoint: interpolated path segments (percent-encoded) and mixed query values.
struct SearchIssues: GetRoute {
    let owner: String
    let repo: String
    let term: String
    let page: Int
    var path: RoutePath { "repos/\(owner)/\(repo)/issues/search" }
    var query: QueryParameters {
        [
            "q": .string(term),
            "per_page": 100,
            "page": .int(page),
            "sort": "updated",
            "state": "open",
            "draft": false,
            "labels": ["bug", "help wanted", "a/b"],
            "since": nil,
        ]
    }
    var headers: HTTPHeaders { ["Accept": "application/vnd.github+json"] }
}

/// What GitHub sends on a middle page: four links, absolute URLs with query strings.
let githubLink = #"<https://api.github.com/repositories/44838949/issues?state=open&per_page=100&page=3>; rel="next", "#
    + #"<https://api.github.com/repositories/44838949/issues?state=open&per_page=100&page=50>; rel="last", "#
    + #"<https://api.github.com/repositories/44838949/issues?state=open&per_page=100&page=1>; rel="first", "#
    + #"<https://api.github.com/repositories/44838949/issues?state=open&per_page=100&page=1>; rel="prev""#
/// Relative targets resolved against the request URL, quoted parameters, several relations in one `rel`.
let relativeLink = #"</items?cursor=abc%2Cdef&limit=50>; rel="next"; title="Next, page", "#
    + #"</items?limit=50>; rel="first start"; type="application/json", </items?cursor=zzz&limit=50>; rel=last"#

let benchmarks: @Sendable () -> Void = {
    // p90 is what `thresholds check` compares. Time-based metrics: loose, the machine is shared.
    // Malloc counts per call are deterministic: 5%. (Relative only: an absolute tolerance is
    // checked as well, not instead, so it would only make the check stricter.)
    let timing = BenchmarkThresholds(relative: [.p90: timeTolerance(35)])
    let mallocs = BenchmarkThresholds(relative: [.p90: 5.0])

    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 200,
        thresholds: [.throughput: timing, .wallClock: timing, .mallocCountTotal: mallocs]
    )

    let api = API(baseURL: "https://api.github.com/v3", headers: ["User-Agent": "trawl-bench", "X-Trace": "1"])

    // (3) Request building: route -> URL (path segments, query), merged headers.
    Benchmark("request-for-GetRoute") { benchmark in
        for i in benchmark.scaledIterations {
            let route = SearchIssues(owner: "apple", repo: "swift nio", term: "is:issue crash ü", page: i & 63)
            blackHole(try api.request(for: route))
        }
    }

    // (4) Link header parsing.
    Benchmark("LinkHeader-github-4-links") { benchmark in
        for _ in benchmark.scaledIterations {
            let links = LinkHeader(githubLink)
            blackHole(links.next)
        }
    }

    Benchmark("LinkHeader-relative-resolved") { benchmark in
        for _ in benchmark.scaledIterations {
            let links = LinkHeader(relativeLink, baseURL: "https://api.example.com/v1/items?limit=50")
            blackHole(links.next)
        }
    }
}
