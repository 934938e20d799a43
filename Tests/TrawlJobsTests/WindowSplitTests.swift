import Foundation
import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// The planning half of parallel windows (issue 39, point 4): cuts and bisections of `[from, to)`.
@Suite("window split", .hangGuard)
struct WindowSplitTests {
    @Test("dates: equal half-open windows that tile the range, boundaries in whole seconds")
    func datesTile() throws {
        let windows = try WindowSplit.cut(from: "2024-01-01T00:00:00Z", to: "2024-01-01T00:08:00Z", count: 4)
        #expect(windows.map(\.description) == [
            "[2024-01-01T00:00:00Z, 2024-01-01T00:02:00Z)", "[2024-01-01T00:02:00Z, 2024-01-01T00:04:00Z)",
            "[2024-01-01T00:04:00Z, 2024-01-01T00:06:00Z)", "[2024-01-01T00:06:00Z, 2024-01-01T00:08:00Z)",
        ])
        for (left, right) in zip(windows, windows.dropFirst()) { #expect(left.to == right.from) }
    }

    @Test("integers: the last window is the shorter one; a narrow range gets fewer windows; an empty one none")
    func integers() throws {
        let windows = try WindowSplit.cut(from: "0", to: "10", count: 4)
        #expect(windows.map { [$0.from, $0.to] } == [["0", "3"], ["3", "6"], ["6", "9"], ["9", "10"]])
        #expect(try WindowSplit.cut(from: "5", to: "7", count: 8).map { [$0.from, $0.to] } == [["5", "6"], ["6", "7"]])
        #expect(try WindowSplit.cut(from: "7", to: "7", count: 8).isEmpty)
        #expect(try WindowSplit.cut(from: "9", to: "7", count: 8).isEmpty)
    }

    @Test("every integer of the range lies in exactly one window, boundaries included")
    func eachValueOnce() throws {
        for count in [1, 3, 7, 1_000] {
            let windows = try WindowSplit.cut(from: "-20", to: "1000", count: count)
            #expect(windows.count <= count)
            for value in [-20, -1, 0, 999] + windows.compactMap({ Int($0.from) }) {
                let holding = windows.filter { Int($0.from)! <= value && value < Int($0.to)! }
                #expect(holding.count == 1, "\(value) in \(holding)")
            }
            #expect(!windows.contains { Int($0.from)! <= 1000 && 1000 < Int($0.to)! }, "the end is excluded")
        }
    }

    @Test("bisect halves a window; at 1 second or 1 unit it fails naming the window")
    func bisect() throws {
        let (low, high) = try WindowSplit.bisect(.init(from: "2024-01-01T00:00:00Z", to: "2024-01-01T00:00:09Z"))
        #expect(low.to == "2024-01-01T00:00:04Z" && high.from == low.to && high.to == "2024-01-01T00:00:09Z")
        var window = WindowSplit.Window(from: "0", to: "1000")
        var depth = 0
        while let halves = try? WindowSplit.bisect(window) {
            window = halves.0
            depth += 1
        }
        #expect(window.to == "1" && depth == 9)  // 1000, 500, 250, 125, 62, 31, 15, 7, 3, 1
        #expect(throws: WindowSplit.Problem.self) { try WindowSplit.bisect(.init(from: "0", to: "1")) }
        do {
            _ = try WindowSplit.bisect(.init(from: "2024-01-01T00:00:00Z", to: "2024-01-01T00:00:01Z"))
            Issue.record("a 1-second window was split")
        } catch {
            #expect(error.message.contains("[2024-01-01T00:00:00Z, 2024-01-01T00:00:01Z)"), "\(error)")
            #expect(error.message.contains("1 second wide"), "\(error)")
        }
    }

    @Test("hostile: a window count out of 1...1000 and mixed or unreadable bounds are refused")
    func hostile() {
        #expect(throws: WindowSplit.Problem.self) { try WindowSplit.cut(from: "0", to: "10", count: 0) }
        #expect(throws: WindowSplit.Problem.self) { try WindowSplit.cut(from: "0", to: "10", count: 1_001) }
        #expect(throws: WindowSplit.Problem.self) { try WindowSplit.cut(from: "0", to: "2024-01-01T00:00:00Z", count: 2) }
        #expect(throws: WindowSplit.Problem.self) { try WindowSplit.cut(from: "x", to: "y", count: 2) }
        // The widest integer range still cuts into at most the count asked.
        let wide = try? WindowSplit.cut(from: String(Int64.min), to: String(Int64.max), count: 1_000)
        #expect((wide?.count ?? 0) <= 1_000 && (wide?.count ?? 0) > 0)
    }
}
