/// Decoded items waiting to be handed out, once each and in order: moved in and moved out, so a hand-out costs
/// no copy of the item (no retain and release of its fields), and the storage is kept for the next batch. The
/// library's page readers keep a page's items here between the task that decodes them and the consumer.
///
/// Used by one task at a time (a page's reader hands it over with the page), hence `@unchecked Sendable`.
package final class ItemQueue<Item>: @unchecked Sendable {
    private var storage: UnsafeMutablePointer<Item>
    private var capacity: Int
    private var head = 0
    private var tail = 0

    /// Room for `capacity` items before the first growth.
    package init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    package var isEmpty: Bool { head == tail }
    package var count: Int { tail - head }

    package func append(_ item: consuming Item) {
        if tail == capacity { grow() }
        (storage + tail).initialize(to: item)
        tail += 1
    }

    /// The first item, moved out; `nil` when there is none.
    package func take() -> Item? {
        guard head < tail else { return nil }
        let item = (storage + head).move()
        head += 1
        if head == tail {
            head = 0
            tail = 0
        }
        return item
    }

    private func grow() {
        let live = tail - head
        let larger = Swift.max(capacity * 2, 16)
        let moved = UnsafeMutablePointer<Item>.allocate(capacity: larger)
        moved.moveInitialize(from: storage + head, count: live)
        storage.deallocate()
        storage = moved
        capacity = larger
        head = 0
        tail = live
    }

    deinit {
        (storage + head).deinitialize(count: tail - head)
        storage.deallocate()
    }
}
