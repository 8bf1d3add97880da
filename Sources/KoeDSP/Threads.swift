import Glibc

// Foundation's NSLock, NSCondition and Thread are pthread calls on Linux; the core makes its own so that it links no
// Foundation. pthread locks, not Synchronization's Mutex: the plugin tests' call counter sees them, so one taken in
// an audio callback fails the tests, and ThreadSanitizer sees them taken.

/// The core's one lock: a mutex, and a condition variable waited on with it held. Every lock of koe's own work is
/// one of these (the workspace pools, the FFT planner, the analyser's recycler, the vocoder's threads, the worker
/// pool); a lock that nobody waits on simply never signals.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        // Timed waits count on the monotonic clock, which a change of the wall clock does not move.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() {
        pthread_mutex_lock(mutex)
    }

    package func unlock() {
        pthread_mutex_unlock(mutex)
    }

    package func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// With the lock held: releases it until signalled, then takes it again. Callers wait in a loop on their own
    /// condition (a wake-up may come without a signal).
    package func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// As `wait`, but returns false once `deadline` (in `monotonicSeconds()`) has passed without a signal.
    func wait(until deadline: Double) -> Bool {
        let whole = deadline.rounded(.down)
        var time = timespec(tv_sec: Int(whole), tv_nsec: Int((deadline - whole) * 1e9))
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }

    package func signal() {
        pthread_cond_signal(condition)
    }

    package func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// Seconds on the monotonic clock (CLOCK_MONOTONIC, read through the vDSO: no system call, no lock), from an
/// arbitrary origin: for durations and for `Lock.wait(until:)`.
package func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
