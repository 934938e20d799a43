import Testing
@testable import TrawlBench

@Suite("bench: how many loop threads --loops gives")
struct BenchLoopsTests {
    @Test("auto: one per core, at most 4 and at most -c; half the cores for plain requests to a loopback server")
    func auto() {
        let remote = ["https://api.example/items", "http://10.0.0.7:8080/"]
        let local = ["http://127.0.0.1:8080/a", "http://localhost/b", "http://[::1]:9/c"]
        #expect(BenchLoops.count("auto", concurrency: 64, targets: remote, flows: false, cores: 2) == 2)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: remote, flows: false, cores: 16) == 4)
        #expect(BenchLoops.count("auto", concurrency: 3, targets: remote, flows: false, cores: 16) == 3)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: false, cores: 2) == 1)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: false, cores: 6) == 3)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: false, cores: 16) == 4)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: false, cores: 1) == 1)
        #expect(BenchLoops.count("auto", concurrency: 1, targets: remote, flows: false, cores: 8) == 1)
        // One remote URL among loopback ones: the server is not only here.
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local + ["http://api.example/"], flows: false, cores: 2) == 2)
        // Paginated flows parse every page on the loops: the client's work outweighs the server's.
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: true, cores: 2) == 2)
        #expect(BenchLoops.count("auto", concurrency: 64, targets: local, flows: true, cores: 16) == 4)
        // A DNS name that merely starts with 127. is not loopback.
        #expect(BenchLoops.count("auto", concurrency: 64, targets: ["http://127.0.0.1.nip.example/"], flows: false, cores: 2) == 2)
    }

    @Test("a number from 1 to 64 is taken as it is; anything else is not a loop count")
    func numbers() {
        #expect(BenchLoops.count("1", concurrency: 64, targets: [], flows: false, cores: 2) == 1)
        #expect(BenchLoops.count("64", concurrency: 1, targets: [], flows: false, cores: 2) == 64)
        for text in ["0", "65", "-1", "many", "", " 2"] {
            #expect(BenchLoops.count(text, concurrency: 64, targets: [], flows: false, cores: 2) == nil, "\(text)")
        }
    }
}
