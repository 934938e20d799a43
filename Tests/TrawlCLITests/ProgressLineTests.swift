import Testing
import TrawlTestSupport
@testable import trawl

@Suite("The progress line's text", .endToEnd)
struct ProgressLineTests {
    @Test("with a total: bar, percent, MB done/total, the unit before the ETA, then the speed")
    func withTotal() {
        let line = ProgressLine.text(arrow: "↓", done: 500_000, total: 3_000_000, baseline: 0, elapsed: 1)
        #expect(line == "↓ [####                    ]  17% 0.5/3.0 MB ETA 5s  0.5 MB/s")
    }

    @Test("without a total: MB done and the speed")
    func withoutTotal() {
        let line = ProgressLine.text(arrow: "↑", done: 2_400_000, total: nil, baseline: 0, elapsed: 2)
        #expect(line == "↑ 2.4 MB  1.2 MB/s")
    }

    @Test("a resumed download's speed and ETA count only the bytes of this run")
    func resumed() {
        // 2 MB were on disk; 1 MB more arrived in 2 s: 0.5 MB/s, and 1 MB left takes 2 s.
        let line = ProgressLine.text(arrow: "↓", done: 3_000_000, total: 4_000_000, baseline: 2_000_000, elapsed: 2)
        #expect(line == "↓ [##################      ]  75% 3.0/4.0 MB ETA 2s  0.5 MB/s")
        // At the first report nothing has arrived yet: no speed, no ETA (not one derived from the old bytes).
        let first = ProgressLine.text(arrow: "↓", done: 2_000_000, total: 4_000_000, baseline: 2_000_000, elapsed: 0)
        #expect(first == "↓ [############            ]  50% 2.0/4.0 MB  0.0 MB/s")
    }

    @Test("a finished transfer shows no ETA; long ETAs read as minutes and hours")
    func finishedAndDurations() {
        let done = ProgressLine.text(arrow: "↓", done: 1_000_000, total: 1_000_000, baseline: 0, elapsed: 5)
        #expect(done == "↓ [########################] 100% 1.0/1.0 MB  0.2 MB/s")
        #expect(ProgressLine.duration(0.2) == "1s")
        #expect(ProgressLine.duration(59) == "59s")
        #expect(ProgressLine.duration(185) == "3m05s")
        #expect(ProgressLine.duration(7_650) == "2h07m")
    }
}
