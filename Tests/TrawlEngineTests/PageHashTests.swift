import Testing
import TrawlTestSupport
import TrawlEngine

@Suite(.hangGuard) struct PageHashTests {
    @Test func theValueDoesNotDependOnHowTheBytesAreSplit() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 >> 3) }
        let whole = PageHash.of(bytes)
        for split in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 500, 999, 1000] {
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
        // Two words of one block swapped (each lane is the same function of its word): a different value.
        var swapped = bytes
        swapped.replaceSubrange(0..<16, with: bytes[8..<16] + bytes[0..<8])
        #expect(swapped != bytes && PageHash.of(swapped) != value)
    }

    /// Values an index on disk holds must never change: these were computed by an independent implementation.
    @Test func valuesOnDiskStayTheSame() {
        let line = Array("{\"id\":1}\n".utf8)
        let seven = Array([[UInt8]](repeating: line, count: 7).joined())
        #expect(PageHash.of(line) == 0xA69D_4D82_B4EF_DBE2)
        #expect(PageHash.of(seven) == 0xA637_8F8A_1D06_BBAC)
        #expect(PageHash.of([]) == 0xA6DE_4998_8193_7D2D)
        #expect(SerialPageHash.of(line) == 0xA5E1_22DF_313D_B925)
        #expect(SerialPageHash.of(seven) == 0xA56A_7C66_CDFC_D087)
        #expect(SerialPageHash.of([]) == 0xA522_37F5_E70F_987A)
        var split = SerialPageHash()
        split.update(Array(seven[..<13]))
        split.update(Array(seven[13...]))
        #expect(split.value == SerialPageHash.of(seven))
    }
}
