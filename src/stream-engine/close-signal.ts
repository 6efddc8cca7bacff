/** Closed-once state with callbacks: the part of a stream sink's lifecycle every transport shares. */
export class CloseSignal {
  private isClosed = false;
  private readonly callbacks: (() => void)[] = [];

  get closed(): boolean {
    return this.isClosed;
  }

  /** Runs `cb` at close, or at once when already closed. */
  onClose(cb: () => void): void {
    if (this.isClosed) cb();
    else this.callbacks.push(cb);
  }

  /** Closes and runs the callbacks; false when it was already closed. */
  fire(): boolean {
    if (this.isClosed) return false;
    this.isClosed = true;
    for (const cb of this.callbacks.splice(0)) cb();
    return true;
  }
}
