package io.github.distlock.autoconfigure;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.asm.ConstantDynamic;
import org.springframework.asm.Handle;
import org.springframework.asm.Label;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.SpringAsmInfo;
import org.springframework.asm.Type;

/**
 * Follows a method's operand stack, one entry per word, far enough to tell for each instance
 * call whether its receiver is {@code this}: what {@code aload_0} pushed in an instance method
 * that has not stored into local 0 before (in instruction order), possibly duplicated or cast.
 * Everything else is "not this", and so is whatever the walk cannot follow (a stack it lost track
 * of reads as empty, words missing below a DUP as "not this"); where paths join (a jump target, a
 * switch case), an entry is {@code this} only if it is on every path that reaches it. A call is
 * reported as on {@code this} only when it surely is.
 */
abstract class ReceiverTracker extends MethodVisitor {

    private final boolean instanceMethod;

    private final List<Boolean> stack = new ArrayList<>();

    private final Map<Label, List<Boolean>> stackAtTarget = new HashMap<>();

    private final Set<Label> handlers = new HashSet<>();

    private boolean reachable = true;

    private boolean thisOverwritten;

    ReceiverTracker(int access) {
        super(SpringAsmInfo.ASM_VERSION);
        this.instanceMethod = (access & Opcodes.ACC_STATIC) == 0;
    }

    /**
     * Told of each instance call, before its effect on the stack.
     * @param onThis whether the receiver is surely {@code this}
     */
    abstract void instanceCall(String owner, String name, String descriptor, boolean onThis);

    @Override
    public void visitTryCatchBlock(Label start, Label end, Label handler, @Nullable String type) {
        this.handlers.add(handler);
    }

    @Override
    public void visitLabel(Label label) {
        List<Boolean> jumpedIn = this.stackAtTarget.get(label);
        if (this.handlers.contains(label)) {
            this.stack.clear();
            push(1);
        }
        else if (jumpedIn != null) {
            List<Boolean> joined = this.reachable ? merge(this.stack, jumpedIn) : jumpedIn;
            this.stack.clear();
            this.stack.addAll(joined);
        }
        this.reachable = true;
    }

    /** Records the stack a jump brings to {@code target}, joined with what other jumps brought. */
    private void jumpsTo(Label target) {
        List<Boolean> before = this.stackAtTarget.get(target);
        this.stackAtTarget.put(target, (before != null) ? merge(before, this.stack) : new ArrayList<>(this.stack));
    }

    /** @return the join of two paths' stacks, aligned at the top: {@code this} only where both say so */
    private static List<Boolean> merge(List<Boolean> one, List<Boolean> other) {
        int size = Math.min(one.size(), other.size());
        List<Boolean> joined = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            joined.add(one.get(one.size() - size + i) && other.get(other.size() - size + i));
        }
        return joined;
    }

    @Override
    public void visitInsn(int opcode) {
        switch (opcode) {
            case Opcodes.ACONST_NULL, Opcodes.ICONST_M1, Opcodes.ICONST_0, Opcodes.ICONST_1, Opcodes.ICONST_2,
                    Opcodes.ICONST_3, Opcodes.ICONST_4, Opcodes.ICONST_5, Opcodes.FCONST_0, Opcodes.FCONST_1,
                    Opcodes.FCONST_2 -> push(1);
            case Opcodes.LCONST_0, Opcodes.LCONST_1, Opcodes.DCONST_0, Opcodes.DCONST_1 -> push(2);
            case Opcodes.IALOAD, Opcodes.FALOAD, Opcodes.AALOAD, Opcodes.BALOAD, Opcodes.CALOAD, Opcodes.SALOAD -> popPush(2, 1);
            case Opcodes.LALOAD, Opcodes.DALOAD -> popPush(2, 2);
            case Opcodes.IASTORE, Opcodes.FASTORE, Opcodes.AASTORE, Opcodes.BASTORE, Opcodes.CASTORE,
                    Opcodes.SASTORE -> pop(3);
            case Opcodes.LASTORE, Opcodes.DASTORE -> pop(4);
            case Opcodes.POP, Opcodes.MONITORENTER, Opcodes.MONITOREXIT -> pop(1);
            case Opcodes.POP2 -> pop(2);
            case Opcodes.DUP -> duplicate(1, 0);
            case Opcodes.DUP_X1 -> duplicate(1, 1);
            case Opcodes.DUP_X2 -> duplicate(1, 2);
            case Opcodes.DUP2 -> duplicate(2, 0);
            case Opcodes.DUP2_X1 -> duplicate(2, 1);
            case Opcodes.DUP2_X2 -> duplicate(2, 2);
            case Opcodes.SWAP -> {
                boolean top = pop();
                boolean below = pop();
                this.stack.add(top);
                this.stack.add(below);
            }
            case Opcodes.IADD, Opcodes.ISUB, Opcodes.IMUL, Opcodes.IDIV, Opcodes.IREM, Opcodes.ISHL, Opcodes.ISHR,
                    Opcodes.IUSHR, Opcodes.IAND, Opcodes.IOR, Opcodes.IXOR, Opcodes.FADD, Opcodes.FSUB, Opcodes.FMUL,
                    Opcodes.FDIV, Opcodes.FREM, Opcodes.FCMPL, Opcodes.FCMPG -> popPush(2, 1);
            case Opcodes.LADD, Opcodes.LSUB, Opcodes.LMUL, Opcodes.LDIV, Opcodes.LREM, Opcodes.LAND, Opcodes.LOR,
                    Opcodes.LXOR, Opcodes.DADD, Opcodes.DSUB, Opcodes.DMUL, Opcodes.DDIV, Opcodes.DREM -> popPush(4, 2);
            case Opcodes.LSHL, Opcodes.LSHR, Opcodes.LUSHR -> popPush(3, 2);
            case Opcodes.LCMP, Opcodes.DCMPL, Opcodes.DCMPG -> popPush(4, 1);
            case Opcodes.INEG, Opcodes.FNEG, Opcodes.I2F, Opcodes.F2I, Opcodes.I2B, Opcodes.I2C, Opcodes.I2S,
                    Opcodes.ARRAYLENGTH -> popPush(1, 1);
            case Opcodes.LNEG, Opcodes.DNEG, Opcodes.L2D, Opcodes.D2L -> popPush(2, 2);
            case Opcodes.I2L, Opcodes.I2D, Opcodes.F2L, Opcodes.F2D -> popPush(1, 2);
            case Opcodes.L2I, Opcodes.L2F, Opcodes.D2I, Opcodes.D2F -> popPush(2, 1);
            case Opcodes.IRETURN, Opcodes.FRETURN, Opcodes.ARETURN, Opcodes.LRETURN, Opcodes.DRETURN, Opcodes.RETURN,
                    Opcodes.ATHROW -> unreachable();
            default -> {
                // NOP
            }
        }
    }

    @Override
    public void visitIntInsn(int opcode, int operand) {
        if (opcode == Opcodes.NEWARRAY) {
            popPush(1, 1);
        }
        else {
            push(1);
        }
    }

    @Override
    public void visitVarInsn(int opcode, int variable) {
        switch (opcode) {
            case Opcodes.ALOAD -> this.stack.add(this.instanceMethod && variable == 0 && !this.thisOverwritten);
            case Opcodes.ILOAD, Opcodes.FLOAD -> push(1);
            case Opcodes.LLOAD, Opcodes.DLOAD -> push(2);
            case Opcodes.ISTORE, Opcodes.FSTORE, Opcodes.ASTORE -> {
                this.thisOverwritten |= (variable == 0);
                pop(1);
            }
            case Opcodes.LSTORE, Opcodes.DSTORE -> {
                this.thisOverwritten |= (variable == 0);
                pop(2);
            }
            default -> {
                // RET: the stack stays
            }
        }
    }

    @Override
    public void visitTypeInsn(int opcode, String type) {
        switch (opcode) {
            case Opcodes.NEW -> push(1);
            case Opcodes.ANEWARRAY, Opcodes.INSTANCEOF -> popPush(1, 1);
            default -> {
                // CHECKCAST: the same reference
            }
        }
    }

    @Override
    public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
        int size = Type.getType(descriptor).getSize();
        switch (opcode) {
            case Opcodes.GETSTATIC -> push(size);
            case Opcodes.PUTSTATIC -> pop(size);
            case Opcodes.GETFIELD -> popPush(1, size);
            default -> pop(1 + size);
        }
    }

    @Override
    public void visitMethodInsn(int opcode, String owner, String name, String descriptor, boolean isInterface) {
        pop(argumentWords(descriptor));
        if (opcode != Opcodes.INVOKESTATIC) {
            instanceCall(owner, name, descriptor, pop());
        }
        push(Type.getReturnType(descriptor).getSize());
    }

    @Override
    public void visitInvokeDynamicInsn(String name, String descriptor, Handle bootstrap, Object... arguments) {
        pop(argumentWords(descriptor));
        push(Type.getReturnType(descriptor).getSize());
    }

    @Override
    public void visitJumpInsn(int opcode, Label label) {
        switch (opcode) {
            case Opcodes.IF_ICMPEQ, Opcodes.IF_ICMPNE, Opcodes.IF_ICMPLT, Opcodes.IF_ICMPGE, Opcodes.IF_ICMPGT,
                    Opcodes.IF_ICMPLE, Opcodes.IF_ACMPEQ, Opcodes.IF_ACMPNE -> pop(2);
            case Opcodes.GOTO, Opcodes.JSR -> {
                // GOTO takes nothing; a JSR's return address is gone by its target's first store.
            }
            default -> pop(1);
        }
        jumpsTo(label);
        if (opcode == Opcodes.GOTO) {
            unreachable();
        }
    }

    @Override
    public void visitLdcInsn(Object value) {
        boolean twoWords = value instanceof Long || value instanceof Double || (value instanceof ConstantDynamic constant
                && Type.getType(constant.getDescriptor()).getSize() == 2);
        push(twoWords ? 2 : 1);
    }

    @Override
    public void visitTableSwitchInsn(int min, int max, Label defaultLabel, Label... labels) {
        switchTo(defaultLabel, labels);
    }

    @Override
    public void visitLookupSwitchInsn(Label defaultLabel, int[] keys, Label[] labels) {
        switchTo(defaultLabel, labels);
    }

    /** A switch takes its key and goes to one of its labels, never on. */
    private void switchTo(Label defaultLabel, Label[] labels) {
        pop(1);
        jumpsTo(defaultLabel);
        for (Label label : labels) {
            jumpsTo(label);
        }
        unreachable();
    }

    @Override
    public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
        popPush(dimensions, 1);
    }

    private static int argumentWords(String descriptor) {
        int words = 0;
        for (Type argument : Type.getArgumentTypes(descriptor)) {
            words += argument.getSize();
        }
        return words;
    }

    /** Code after an unconditional jump, a return or a throw is reached only through a label. */
    private void unreachable() {
        this.stack.clear();
        this.reachable = false;
    }

    private void push(int words) {
        for (int i = 0; i < words; i++) {
            this.stack.add(false);
        }
    }

    private boolean pop() {
        return !this.stack.isEmpty() && this.stack.remove(this.stack.size() - 1);
    }

    private void pop(int words) {
        for (int i = 0; i < words; i++) {
            pop();
        }
    }

    private void popPush(int popped, int pushed) {
        pop(popped);
        push(pushed);
    }

    /** DUP forms: copies the top {@code words} below the {@code skipped} words under them. */
    private void duplicate(int words, int skipped) {
        while (this.stack.size() < words + skipped) {
            // Words the walk lost track of: not this.
            this.stack.add(0, false);
        }
        int size = this.stack.size();
        List<Boolean> copied = new ArrayList<>(this.stack.subList(size - words, size));
        this.stack.addAll(size - words - skipped, copied);
    }
}
