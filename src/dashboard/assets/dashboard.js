// The dashboard's progressive enhancement; every page works without it.
// - A region marked data-refresh (a batch still processing) is brought up to date from the server
//   every two seconds until the server sends it without the mark. Only its parts marked data-live
//   change, in place, and never one that holds the focus or a field the person has changed: the
//   focus stays where it is, and a role="status" part is announced when its text changes.
// - A form's error summary, or else the notice of the last action, takes the focus when the page
//   opens, so a screen reader reads it first.
document.addEventListener('DOMContentLoaded', () => {
  const first = document.getElementById('error-summary') ?? document.getElementById('notice');
  if (first) first.focus();
  const region = document.querySelector('[data-refresh]');
  if (!region) return;
  region.addEventListener('input', (event) => event.target.closest('[data-live]')?.setAttribute('data-edited', ''));
  const tick = async () => {
    try {
      const response = await fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (!response.ok) return;
      const doc = new DOMParser().parseFromString(await response.text(), 'text/html');
      const fresh = doc.getElementById(region.id);
      if (!fresh) return;
      for (const next of fresh.querySelectorAll('[data-live][id]')) {
        const here = document.getElementById(next.id);
        if (!here || here.contains(document.activeElement) || here.hasAttribute('data-edited')) continue;
        if (here instanceof HTMLProgressElement) {
          here.max = next.max;
          here.value = next.value;
          here.textContent = next.textContent;
        } else if (here.innerHTML !== next.innerHTML) here.innerHTML = next.innerHTML;
      }
      if (!fresh.hasAttribute('data-refresh')) {
        region.removeAttribute('data-refresh');
        return;
      }
    } catch {
      // The next tick tries again.
    }
    setTimeout(tick, 2000);
  };
  setTimeout(tick, 2000);
});
