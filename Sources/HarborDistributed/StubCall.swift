// HarborDistributed — calls made through a @Resolvable protocol's stub.
import Distributed

/// A call made through a `@Resolvable` distributed protocol's stub (D10).
///
/// A caller holding `$Greeter` (the stub the `@Resolvable` macro makes for
/// `protocol Greeter`) calls the stub's own functions: the target's name
/// starts with the stub type's mangled name, not the hosted actor's, and
/// the call's first generic substitution is the stub type itself (the
/// `Self` of the protocol extension the functions live in). Such a call
/// is taken when that first substitution names a type of this process
/// that is a stub (`_DistributedActorStub`), by its canonical mangled name
/// (``SubstitutionCheck``), and the target starts with it; the actor's own
/// type then stands for `Self` (the runtime calls the protocol's function
/// through the actor's own conformance, never the stub's), and a hosted
/// actor that does not conform to the protocol is refused
/// ``HarborActorSystemError/Code/unknownTarget``
/// (``SubstitutionCheck/types(_:target:selfType:)``).
enum StubCall {
    /// Whether `header` names a function of a stub type by that stub.
    static func isStubCall(_ header: InvocationHeader) -> Bool {
        guard let name = header.generics.first, SubstitutionCheck.isPlain(name),
              header.target.hasPrefix("$s" + name),
              let type = _typeByName(name), _mangledTypeName(type) == name else { return false }
        return type is any _DistributedActorStub.Type
    }
}
