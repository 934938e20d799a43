import Testing
@testable import TrawlBench

@Suite("bench: how many loop threads --loops gives")
struct BenchLoopsTests {
    @Test("auto: one per core, at most 4 and at most -c; half the cores when the server is on loopback")
    func auto() {
        let remote = ["https://api.example/items", "http://10.0.0.7:8080/"]
        let local = ["http://127.0.0.1:8080/a", "http://localhost/b", "http://[::1]:9/c"]
        #expect(BenchLoops.count("auto", concurrency: 64, targets: remote, cores: 2) == 2)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: remote, cores: 16) == 4)
        #expect(BenchLoops.count("auto", concurrency: 3, targets: remote, cores: 16) == 3)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, cores: 2) == 1)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, cores: 6) == 3)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, cores: 16) == 4)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, cores: 1) == 1)
        #expect(BenchLoops.count("auto", concurrency: 1, targets: remote, cores: 8) == 1)
        // One remote URL among loopback ones: the server is not only here.
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local + ["http://api.example/"], cores: 2) == 2)
        // A DNS name that merely starts with 127. is not loopback.
        #expect(BenchLoops.count("auto", concurrency: 64, targets: ["http://127.0.0.1.nip.example/"], cores: 2) == 2)
    }

    @Test("a number from 1 to 64 is taken as it is; anything else is not a loop count")
    func numbers() {
        #expect(BenchLoops.count("1", concurrency: 64, targets: [], cores: 2) == 1)
        #expect(BenchLoops.count("64", concurrency: 1, targets: [], cores: 2) == 64)
        for text in ["0", "65", "-1", "many", "", " 2"] {
            #expect(BenchLoops.count(text, concurrency: 64, targets: [], cores: 2) == nil, "\(text)")
        }
    }
}
