import Testing
import TrawlTestSupport

@testable import TrawlEngine

@Suite("PathName: paths taken apart without Foundation's one-character trap", .hangGuard)
struct PathNameTests {
    @Test("the parent of one-character, nested, rooted and slash-ended names")
    func parents() {
        let cases: [(String, String)] = [
            ("s", ""), ("o", ""), ("n/out.jsonl", "n"), ("a/", ""), ("a/b/", "a"), ("/s", "/"), ("/", "/"),
            ("a//b", "a"), ("./s", "."), ("ab", ""), ("/a/b/c", "/a/b"), ("", ""), ("//x", "/"),
        ]
        for (path, parent) in cases {
            #expect(PathName.parent(of: path) == parent, "parent of '\(path)'")
        }
        #expect(PathName.directory(containing: "s") == ".")
        #expect(PathName.directory(containing: "n/x") == "n")
    }

    @Test("the last component ignores trailing slashes")
    func lastComponents() {
        let cases: [(String, String)] = [
            ("s", "s"), ("a/b", "b"), ("a/b/", "b"), ("/", "/"), ("/s", "s"), ("/dev/fd/63", "63"), ("j.yaml", "j.yaml"),
        ]
        for (path, last) in cases {
            #expect(PathName.lastComponent(of: path) == last, "last component of '\(path)'")
        }
    }
}

@Suite("Duration bounds: server numbers and huge timeouts never trap", .hangGuard)
struct DurationBoundsTests {
    @Test("boundedSeconds clamps infinity, huge and negative values and NaN")
    func bounded() {
        #expect(Duration.boundedSeconds(2.5) == .milliseconds(2500))
        #expect(Duration.boundedSeconds(.infinity) == .seconds(Duration.longestBoundedSeconds))
        #expect(Duration.boundedSeconds(1e300) == .seconds(Duration.longestBoundedSeconds))
        #expect(Duration.boundedSeconds(-3) == .zero)
        #expect(Duration.boundedSeconds(.nan) == .zero)
    }

    @Test("a timeout of Int64.max seconds is libcurl's longest, not an overflow")
    func hugeTimeoutMilliseconds() {
        #expect(Duration.seconds(Int64.max).trawlMilliseconds == Int(Int64.max))
        #expect(Duration.seconds(Int64.max / 1000).trawlMilliseconds == Int(Int64.max))
        #expect(Duration.milliseconds(1500).trawlMilliseconds == 1500)
        #expect(Duration.nanoseconds(1).trawlMilliseconds == 1)
    }
}
