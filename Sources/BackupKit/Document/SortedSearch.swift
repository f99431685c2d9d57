/// Binary search over the document's sorted collections (challenges by id, day logs by key,
/// paused days), so each caller says only what it sorts by.
extension RandomAccessCollection where Index == Int {
    /// In a collection sorted by `key`, the first index whose element's key is not below
    /// `target`: where `target` is, or would go.
    func lowerBound<Key: Comparable>(of target: Key, by key: (Element) -> Key) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if key(self[middle]) < target { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the element whose key is `target`, in an array sorted by `key` with unique
    /// keys; nil when there is none.
    func sortedIndex<Key: Comparable>(of target: Key, by key: (Element) -> Key) -> Int? {
        let index = lowerBound(of: target, by: key)
        return index < endIndex && key(self[index]) == target ? index : nil
    }
}

extension Array {
    /// Sorts the elements (stably) by `less` unless they already are, and drops each element
    /// not above the one kept before it, handing it to `dropped`: the reader's duplicate keys.
    mutating func sortDroppingDuplicates(
        by less: (Element, Element) -> Bool, dropped: (Element) -> Void
    ) {
        guard indices.dropFirst().contains(where: { !less(self[$0 - 1], self[$0]) }) else {
            return
        }
        sort(by: less)
        var kept = 0
        for index in indices {
            if kept > 0, !less(self[kept - 1], self[index]) {
                dropped(self[index])
                continue
            }
            swapAt(kept, index)
            kept += 1
        }
        removeSubrange(kept...)
    }
}
