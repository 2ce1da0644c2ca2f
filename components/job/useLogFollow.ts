'use client';
/**
 * Follow mode of the log viewer: while following, the view sticks to the bottom as lines arrive
 * (and as wrapped rows are measured); scrolling up pauses it, scrolling back to the bottom
 * resumes it. Also tracks whether the bottom is in view, so "Jump to end" shows only when there
 * is something below to jump to.
 */
import { useCallback, useLayoutEffect, useRef, useState, type RefObject } from 'react';

/** Within this many px of the bottom counts as at the bottom (one log line). */
const BOTTOM_SLACK = 20;

const bottomGap = (el: HTMLElement) => el.scrollHeight - el.scrollTop - el.clientHeight;

export function useLogFollow(scroller: RefObject<HTMLDivElement | null>, changes: readonly unknown[]) {
  const [following, setFollowing] = useState(true);
  const followRef = useRef(true);
  const lastTop = useRef(0);
  const [atBottom, setAtBottom] = useState(true);

  const setFollow = useCallback((v: boolean) => {
    followRef.current = v;
    setFollowing(v);
  }, []);

  // After new rows render (or a row was measured): stick to the bottom, and see whether it shows.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    if (followRef.current) {
      el.scrollTop = el.scrollHeight;
      lastTop.current = el.scrollTop;
    }
    setAtBottom(bottomGap(el) < BOTTOM_SLACK);
  }, [following, ...changes]);

  const onScroll = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    const top = el.scrollTop;
    const bottom = bottomGap(el) < BOTTOM_SLACK;
    if (followRef.current && top < lastTop.current - 1 && !bottom) setFollow(false);
    else if (!followRef.current && bottom && top > lastTop.current) setFollow(true);
    lastTop.current = top;
    setAtBottom(bottom);
  }, [scroller, setFollow]);

  /** Follow again from the bottom ("Jump to end", `G`). */
  const toEnd = useCallback(() => {
    setFollow(true);
    const el = scroller.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [scroller, setFollow]);

  /** The first line, following paused (`g`). */
  const toTop = useCallback(() => {
    setFollow(false);
    const el = scroller.current;
    if (el) {
      el.scrollTop = 0;
      lastTop.current = 0;
    }
  }, [scroller, setFollow]);

  return { following, atBottom, setFollow, onScroll, toEnd, toTop };
}
