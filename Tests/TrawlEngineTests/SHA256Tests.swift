import Testing
import TrawlTestSupport
import TrawlEngine

@Suite("SHA-256", .hangGuard)
struct SHA256Tests {
    func hex(_ text: String) -> String {
        var hash = SHA256()
        hash.update(Array(text.utf8))
        return hash.hexDigest()
    }

    @Test("FIPS 180-4 vectors")
    func vectors() {
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var million = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { million.update(chunk) }
        #expect(million.hexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("any split of the input gives the same digest")
    func incremental() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var whole = SHA256()
        whole.update(bytes)
        for split in [1, 55, 56, 63, 64, 65, 128, 999] {
            var parts = SHA256()
            parts.update(bytes[..<split])
            parts.update(bytes[split...])
            #expect(parts.hexDigest() == whole.hexDigest(), "split at \(split)")
        }
    }
}
