'use client';
/**
 * A uPlot chart (a small, fast canvas charting library) that follows its container's width.
 * uPlot is loaded on the client only (it measures the DOM); the chart is rebuilt when its data or
 * options change and resized with its container. A canvas takes no CSS: its axes read the page's
 * text colour each time they are drawn, and the chart is drawn again when the theme changes
 * (lib/ui/theme.ts onThemeChange), so a toggle shows at once.
 */
import { useEffect, useRef } from 'react';
import type uPlot from 'uplot';
import { onThemeChange } from '@/lib/ui/theme';
import 'uplot/dist/uPlot.min.css';

/** Props of UPlotChart: uPlot's options without width (the container's), and its data. */
export interface UPlotChartProps {
  options: Omit<uPlot.Options, 'width'>;
  data: uPlot.AlignedData;
  className?: string;
  /** For tests and the accessibility tree: what the chart shows, in words. */
  label: string;
  testId?: string;
}

export function UPlotChart({ options, data, className, label, testId }: UPlotChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let plot: uPlot | null = null;
    let gone = false;
    const ro = new ResizeObserver(() => plot?.setSize({ width: el.clientWidth, height: options.height }));
    // The theme changed: the axes' labels and ticks take the page's new text colour.
    const stopTheme = onThemeChange(() => plot?.redraw());
    void import('uplot').then(({ default: UPlot }) => {
      if (gone) return;
      // Axes in the page's text colour (light or dark theme), read at each draw.
      const color = () => getComputedStyle(el).color;
      const axes = options.axes?.map((a) => ({ stroke: color, grid: { stroke: 'rgba(128,128,128,0.18)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' }, ...a }));
      plot = new UPlot({ ...options, ...(axes ? { axes } : {}), width: Math.max(40, el.clientWidth) }, data, el);
      ro.observe(el);
    });
    return () => {
      gone = true;
      ro.disconnect();
      stopTheme();
      plot?.destroy();
    };
  }, [options, data]);
  return <div ref={box} className={className} role="img" aria-label={label} data-testid={testId} />;
}
