export default function Home() {
  return <main>jobdeck</main>;
}
