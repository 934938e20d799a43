import Testing
import TrawlTestSupport
import TrawlEngine

@Suite(.hangGuard) struct PageHashTests {
    @Test func theValueDoesNotDependOnHowTheBytesAreSplit() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 >> 3) }
        let whole = PageHash.of(bytes)
        for split in [0, 1, 7, 8, 9, 15, 16, 17, 500, 999, 1000] {
            var hash = PageHash()
            hash.update(Array(bytes[..<split]))
            hash.update(Array(bytes[split...]))
            #expect(hash.value == whole, "split at \(split)")
        }
        var bytewise = PageHash()
        for byte in bytes { bytewise.update([byte]) }
        #expect(bytewise.value == whole)
        #expect(whole >> 56 == PageHash.tag)
    }

    @Test func aFlippedBitALostOrAnAddedByteChangeTheValue() {
        let bytes = Array(String(repeating: "{\"id\":12345,\"name\":\"x\"}\n", count: 40).utf8)
        let value = PageHash.of(bytes)
        for index in stride(from: 0, to: bytes.count, by: 13) {
            for bit in 0..<8 {
                var flipped = bytes
                flipped[index] ^= 1 << bit
                #expect(PageHash.of(flipped) != value)
            }
        }
        // A length that is not a multiple of 8: the last bytes wait in the hash until its value is read.
        let odd = Array(bytes.dropLast(3))
        for index in odd.count - 7..<odd.count {
            var flipped = odd
            flipped[index] ^= 0x10
            #expect(PageHash.of(flipped) != PageHash.of(odd), "byte \(index) of \(odd.count)")
        }
        #expect(PageHash.of(Array(bytes.dropLast())) != value)
        #expect(PageHash.of(bytes + [0]) != value)
        #expect(PageHash.of([]) != PageHash.of([0]))
    }
}
