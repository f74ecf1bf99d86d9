// Harbor — the call-out trampoline for descriptor, process and signal sources.

extension Callout {
    /// A descriptor source's handler (CF's
    /// `__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE1_PERFORM_FUNCTION__`).
    @inline(never)
    static func descriptor(_ source: DescriptorSource, _ events: DescriptorEvents) {
        source.handler(source, events)
    }
}
