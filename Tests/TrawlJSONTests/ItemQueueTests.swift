import Synchronization
import Testing
import TrawlTestSupport
@testable import TrawlJSON

/// The queue a page reader keeps decoded items in: moved in, moved out in order, and whatever is left when it
/// goes away is released (a walk stopped mid-page must not leak the items it had decoded ahead).
@Suite(.hangGuard) struct ItemQueueTests {
    final class Alive: Sendable {
        let count = Atomic<Int>(0)
    }

    final class Tracked: Sendable {
        let value: Int
        let alive: Alive
        init(_ value: Int, alive: Alive) {
            self.value = value
            self.alive = alive
            alive.count.add(1, ordering: .relaxed)
        }
        deinit { alive.count.subtract(1, ordering: .relaxed) }
    }

    @Test func itemsComeOutInOrderAcrossGrowthAndReuse() {
        let queue = ItemQueue<String>(capacity: 2)
        #expect(queue.isEmpty && queue.take() == nil)
        for round in 0..<3 {
            for i in 0..<5 { queue.append("r\(round)-\(i)-" + String(repeating: "x", count: 20)) }
            #expect(queue.take()?.hasPrefix("r\(round)-0-") == true)
            // Growth while the head has moved on keeps the order.
            for i in 5..<40 { queue.append("r\(round)-\(i)-" + String(repeating: "x", count: 20)) }
            #expect(queue.count == 39)
            for i in 1..<40 { #expect(queue.take()?.hasPrefix("r\(round)-\(i)-") == true) }
            #expect(queue.isEmpty && queue.take() == nil)
        }
    }

    @Test func whatIsLeftIsReleasedWithTheQueue() {
        let alive = Alive()
        do {
            let queue = ItemQueue<Tracked>(capacity: 4)
            for i in 0..<10 { queue.append(Tracked(i, alive: alive)) }
            #expect(queue.take()?.value == 0)
            #expect(queue.take()?.value == 1)
            #expect(alive.count.load(ordering: .relaxed) == 8)
        }
        #expect(alive.count.load(ordering: .relaxed) == 0)
    }
}
