/// Binary search over the document's sorted arrays (challenges by id, day logs by key, paused
/// days), so each caller says only what it sorts by.
extension Array {
    /// In an array sorted by `key`, the first index whose element's key is not below
    /// `target`: where `target` is, or would go.
    func lowerBound<Key: Comparable>(of target: Key, by key: (Element) -> Key) -> Int {
        var low = 0
        var high = count
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
        return index < count && key(self[index]) == target ? index : nil
    }
}
